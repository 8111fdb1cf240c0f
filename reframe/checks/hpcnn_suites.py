"""One ReFrame test per hpcnn suite, in two sizes (tags smoke and nightly).

    reframe -C reframe/config/local.py -c reframe/checks -R -t smoke -r
"""
import os
import sys

import reframe as rfm
from reframe.core.builtins import parameter, performance_function, run_after

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from hpcnn_rfm import HpcnnTest  # noqa: E402
from hpcnn_points import EXCHANGES, LIBRARIES, SIZES, largest_size  # noqa: E402


class HpcnnSized(HpcnnTest):
    size = parameter(['smoke', 'nightly'])

    @run_after('init')
    def tag_with_size(self):
        self.tags = {self.size, 'hpcnn'}
        self.settings = SIZES[self.size]
        self.common = ['--iters', str(self.settings['iters']), '--warmup', str(self.settings['warmup']),
                       '--min-time', str(self.settings['min_time']), '--output', '.', '--quiet']


@rfm.simple_test
class HpcnnTrain(HpcnnSized):
    descr = 'hpcnn-train: training throughput on synthetic data'
    num_tasks = 1

    @run_after('init')
    def command(self):
        self.executable = self.program('hpcnn-train')
        self.executable_opts = ['--model', self.settings['model'], '--batch', '32', '--threads', self.threads] + self.common

    @performance_function('images/s')
    def img_per_s(self):
        return self.csv_figure('img_per_s', suite='hpcnn-train')


@rfm.simple_test
class HpcnnInfer(HpcnnSized):
    descr = 'hpcnn-infer: inference throughput on synthetic data'
    num_tasks = 1

    @run_after('init')
    def command(self):
        self.executable = self.program('hpcnn-infer')
        self.executable_opts = ['--model', self.settings['model'], '--batch', '32', '--threads', self.threads] + self.common

    @performance_function('images/s')
    def img_per_s(self):
        return self.csv_figure('img_per_s', suite='hpcnn-infer')


@rfm.simple_test
class HpcnnBlas(HpcnnSized):
    descr = 'hpcnn-blas: SGEMM GFLOP/s of one library'
    num_tasks = 1
    library = parameter(LIBRARIES)

    @run_after('init')
    def command(self):
        self.executable = self.program('hpcnn-blas')
        self.executable_opts = ['--sweep', 'gemm', '--backend', self.library, '--sizes', str(self.settings['gemm']),
                                '--threads', self.threads] + self.common

    @performance_function('GFLOP/s')
    def gflops(self):
        return self.csv_figure('gflops', backend=self.library)


@rfm.simple_test
class HpcnnAllreduce(HpcnnSized):
    descr = 'hpcnn-allreduce: bus bandwidth of one scheme at the largest size, every element checked'
    num_tasks = 2
    exchange = parameter(EXCHANGES)

    @run_after('init')
    def command(self):
        self.executable = self.program('hpcnn-allreduce')
        self.executable_opts = ['--exchange', self.exchange, '--sizes', self.settings['sizes']] + self.common

    @performance_function('GB/s')
    def busbw_gbs(self):
        return self.csv_figure('busbw_gbs', exchange=self.exchange, size_bytes=largest_size(self.size))


@rfm.simple_test
class HpcnnScale(HpcnnSized):
    descr = 'hpcnn-scale: data-parallel training throughput with the ring allreduce'
    num_tasks = 2

    @run_after('init')
    def command(self):
        self.executable = self.program('hpcnn-scale')
        self.executable_opts = ['--model', 'lenet5', '--batch', '32', '--exchange', 'ring'] + self.common

    @performance_function('images/s')
    def img_per_s(self):
        return self.csv_figure('img_per_s', suite='hpcnn-scale')
