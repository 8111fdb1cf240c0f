"""The acceptance sets (jobscripts/acceptance.sh) as ReFrame tests, tags `acceptance` and the set.

The script compares the run with the system's reference (results/reference/<system>/<set>/) and
exits 0 only when every verdict passes: that is the sanity. The performance variables are the
headline figures of the run, from hpcnn-summary's CSV. The reference system name is the ReFrame
system's (variable `reference_system` to choose another).

    reframe -C reframe/config/slurm.py -c reframe/checks -R -t acceptance -t nightly -r
"""
import os
import sys

import reframe as rfm
from reframe.core.builtins import parameter, performance_function, run_after, run_before, variable

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from hpcnn_rfm import HpcnnTest  # noqa: E402


@rfm.simple_test
class HpcnnAcceptance(HpcnnTest):
    descr = 'hpcnn acceptance set against the system reference'
    set_name = parameter(['smoke', 'nightly', 'full'])
    reference_system = variable(str, value='')
    num_tasks = 1  # the script starts its own multi-rank steps (srun in the allocation, else mpirun)
    time_limit = '2h'

    @run_after('init')
    def command(self):
        self.tags = {'acceptance', self.set_name}
        self.executable = os.path.join(self.jobscripts, 'acceptance.sh')

    @run_before('run')
    def into_stage(self):
        system = self.reference_system or self.current_system.name
        self.executable_opts = [self.set_name, system]
        self.env_vars['OUT'] = '.'
        if self.hpcnn_bin:
            self.env_vars['HPCNN_BIN'] = self.hpcnn_bin

    @performance_function('images/s')
    def train_img_per_s(self):
        return self.csv_figure('img_per_s', suite='hpcnn-train', model=self.model_of_set(), dataset='cifar10')

    @performance_function('GFLOP/s')
    def sgemm_gflops(self):
        return self.csv_figure('gflops', backend='openblas', size='256x256x256')

    def model_of_set(self):
        return {'smoke': 'lenet5', 'nightly': 'resnet18', 'full': 'resnet50'}[self.set_name]
