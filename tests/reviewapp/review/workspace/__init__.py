"""The reviewer's side: the queue, its order and cost, the workspace, texts shown."""
