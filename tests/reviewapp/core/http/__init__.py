"""What every request and response goes through: body limits, lazy views, logs, the CSV writer."""
