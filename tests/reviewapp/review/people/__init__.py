"""People and reliability: reviewer accounts, workload, adjudication, known answers."""
