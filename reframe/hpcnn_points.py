"""The points the hpcnn ReFrame tests measure, without ReFrame: their sizes and, per test, the
figure it reports and the point it comes from. The checks (checks/hpcnn_suites.py) run these
points; references_from_runs.py turns measured runs of the same points into references.json.

The smoke and nightly sizes are those of one round of the acceptance sets (jobscripts/acceptance.sh): the
same iterations, warm-up and minimum time, so a blessed acceptance reference measures them too.
"""
import csv
import io
import subprocess

# One table whatever the suites: hpcnn-summary --columns gives a single CSV over all files; the
# tests, their references and their bounds all read it.
SUMMARY_COLUMNS = ('suite,model,backend,dataset,exchange,ranks,batch,size_bytes,size,'
                   'img_per_s,busbw_gbs,gflops,test_acc,wrong,status')

# Per size: iterations, warm-up, minimum timed seconds, model, allreduce sizes (the largest is the
# performance variable), SGEMM size.
SIZES = {
    'smoke':   dict(iters=20, warmup=3, min_time=0.6, model='lenet5',   sizes='4K,1M',  gemm=256),
    'nightly': dict(iters=50, warmup=5, min_time=3, model='resnet18', sizes='4K,16M', gemm=1024),
}
LARGEST = {'1M': 1 << 20, '16M': 16 << 20}
LIBRARIES = ['openblas', 'eigen']
EXCHANGES = ['mpi', 'ring']


def largest_size(size):
    return LARGEST[SIZES[size]['sizes'].split(',')[-1]]


def performance_points(size):
    """(test display name, variable, unit, {field: value} of the point) for every test of a size."""
    s = SIZES[size]
    points = [
        (f'HpcnnTrain %size={size}', 'img_per_s', 'images/s',
         {'suite': 'hpcnn-train', 'model': s['model'], 'dataset': 'cifar10', 'batch': 32}),
        (f'HpcnnInfer %size={size}', 'img_per_s', 'images/s',
         {'suite': 'hpcnn-infer', 'model': s['model'], 'dataset': 'cifar10', 'batch': 32}),
    ]
    gemm = s['gemm']
    points += [(f'HpcnnBlas %size={size} %library={lib}', 'gflops', 'GFLOP/s',
                {'suite': 'hpcnn-blas', 'backend': lib, 'size': f'{gemm}x{gemm}x{gemm}'}) for lib in LIBRARIES]
    points += [(f'HpcnnAllreduce %size={size} %exchange={x}', 'busbw_gbs', 'GB/s',
                {'suite': 'hpcnn-allreduce', 'exchange': x, 'size_bytes': largest_size(size)}) for x in EXCHANGES]
    points.append((f'HpcnnScale %size={size}', 'img_per_s', 'images/s',
                   {'suite': 'hpcnn-scale', 'model': 'lenet5', 'exchange': 'ring', 'batch': 32}))
    return points


def csv_rows(lines):
    """The rows of hpcnn-summary's CSV (comment and blank lines skipped)."""
    return list(csv.DictReader(line for line in lines if line.strip() and not line.startswith('#')))


def matches(row, where):
    """True when the row's fields have the values of `where` (numbers compared as numbers)."""
    for name, want in where.items():
        have = row.get(name, '')
        try:
            if float(have) != float(want):
                return False
        except ValueError:
            if have != str(want):
                return False
    return True


def summary_figures(summary, paths):
    """hpcnn-summary's CSV rows over result files or folders: one row per point and file. Raises
    RuntimeError with hpcnn-summary's last error line when it fails."""
    cmd = [summary, '--format', 'csv', '--columns', SUMMARY_COLUMNS] + list(paths)
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        err = done.stderr.strip().splitlines()
        raise RuntimeError(err[-1] if err else f'{" ".join(cmd)} exited {done.returncode}')
    return csv_rows(io.StringIO(done.stdout))
