# ReFrame site configuration for one machine without a batch system: tests run as local
# processes, multi-rank tests through mpirun, one test at a time (timings are not shared).
#   reframe -C reframe/config/local.py -c reframe/checks -R -t smoke -r
# As root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 in the
# environment; more ranks than cores need -S mpirun_options=--oversubscribe.
site_configuration = {
    'systems': [
        {
            'name': 'local',
            'descr': 'this machine, local scheduler',
            'hostnames': ['.*'],
            'modules_system': 'nomod',
            'partitions': [
                {
                    'name': 'default',
                    'descr': 'local processes, mpirun for several ranks',
                    'scheduler': 'local',
                    'launcher': 'mpirun',
                    'environs': ['hpcnn'],
                    'max_jobs': 1,
                }
            ],
        }
    ],
    'environments': [
        {'name': 'hpcnn', 'cc': 'cc', 'cxx': 'c++', 'ftn': ''},
    ],
}
