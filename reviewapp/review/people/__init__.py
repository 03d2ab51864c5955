"""People (/review/people/): reviewer accounts, invitations and sessions, workload and reassignment, time spent."""
