# ReFrame site configuration for a Slurm cluster: every test is a batch job (sbatch), multi-rank
# tests start with srun. The `squeue` scheduler polls squeue instead of sacct, so it works
# without slurmdbd (accounting); use 'slurm' where sacct works. Adjust the partition name,
# `access` (account, QOS, constraint) and the host name pattern to the site.
#   reframe -C reframe/config/slurm.py -c reframe/checks -R -t acceptance -t nightly -r
site_configuration = {
    'systems': [
        {
            'name': 'cluster',
            'descr': 'a Slurm cluster',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'compute',
                    'descr': 'compute nodes, one job per test',
                    'scheduler': 'squeue',
                    'launcher': 'srun',
                    'access': ['--partition=compute', '--exclusive'],
                    'environs': ['hpcnn'],
                    'max_jobs': 8,
                }
            ],
        }
    ],
    'environments': [
        {'name': 'hpcnn', 'cc': 'cc', 'cxx': 'c++', 'ftn': ''},
    ],
}
