"""The points the hpcnn ReFrame tests measure, without ReFrame: their sizes and, per test, the
figure it reports and the point it comes from. The checks (checks/hpcnn_suites.py) run these
points; references_from_runs.py turns measured runs of the same points into references.json.

The smoke and nightly sizes are those of one round of the acceptance sets (jobscripts/acceptance.sh): the
same iterations, warm-up and minimum time, so a blessed acceptance reference measures them too.
"""

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
