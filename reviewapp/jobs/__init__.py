"""A job as people control it, the same for every registered kind (``reviewapp.core.jobs.job_kind_register``): one
resume form and view (with its budget raise and take-over), one progress fragment, one finish command
(``manage.py finish_job <kind> <id>``) and one final state, in the same words on every page and in the API.

Above the core (which knows no provider) and the provider layer (whose ledgers a job's budget and finish command
read); below the jobs, which only declare their kind."""
