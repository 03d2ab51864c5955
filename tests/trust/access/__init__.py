"""What each role may reach and see: the URL matrix, deploy, limits, every assigning path, the blind crawl."""
