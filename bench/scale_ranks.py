#!/usr/bin/env python3
"""How hpcnn grows with the rank count P, on this machine (ranks oversubscribed): per suite and P,
the start-up time (command start to the live table's header), the time from the last point's row
to the exit (result gathering, writing, finalize), rank 0's peak memory, the result file's size,
the files hpcnn left in the output folder and the lines printed; for the watchdog and a stop signal
followed by --resume, whether the job ended as it should and how long it took. docs/PERFORMANCE.md,
"hpcnn at hundreds of ranks", has the table; tests/scale_ranks.sh checks the 64-rank case.

    bench/scale_ranks.py --hpcnn-build . [--ranks 2,32,64,128,256] [--cases scale,allreduce,...]

Each case is a tiny point (LeNet-5 at batch 2, a few iterations): the figures measure hpcnn's own
cost, not training. mpirun runs with --oversubscribe and mpi_yield_when_idle.
"""
import argparse
import os
import signal
import shutil
import subprocess
import sys
import tempfile
import threading
import time

# name: arguments ('S': the server count, 'L': the training images); the special cases:
#   watchdog     rank P/2 stops (SIGSTOP) in step 3's exchange under --timeout 5: the job must end
#                with exit 1 and one watchdog line; wall_s is the time to that end
#   stop-resume  SIGUSR1 to mpirun once the first of three points is journaled (as Slurm's --signal
#                sends it): exit 75; then --resume completes the run (its exit and times are shown)
CASES = {
    'train': ['hpcnn-train', '--model', 'lenet5', '--batch', '2', '--iters', '10', '--warmup', '1', '--threads', '1'],
    'scale': ['hpcnn-scale', '--model', 'lenet5', '--batch', '2', '--iters', '10', '--warmup', '1',
              '--exchange', 'ring,rhd,mpi'],
    'scale-ps1': ['hpcnn-scale', '--model', 'lenet5', '--batch', '2', '--iters', '10', '--warmup', '1',
                  '--exchange', 'ps-sync,ps-async', '--ps-servers', '1'],
    'scale-psN': ['hpcnn-scale', '--model', 'lenet5', '--batch', '2', '--iters', '10', '--warmup', '1',
                  '--exchange', 'ps-sync,ps-async', '--ps-servers', 'S'],
    'allreduce': ['hpcnn-allreduce', '--exchange', 'mpi,ring,rhd', '--sizes', '4K,1M', '--iters', '10', '--warmup', '1'],
    'train-data': ['hpcnn-train', '--data', 'fashion-mnist', '--model', 'lenet5', '--batch', '4', '--epochs', '1',
                   '--train-limit', 'L', '--test-limit', '256', '--threads', '1'],
    'scale-data': ['hpcnn-scale', '--data', 'fashion-mnist', '--model', 'lenet5', '--batch', '4', '--epochs', '1',
                   '--train-limit', 'L', '--test-limit', '256', '--exchange', 'ring', '--sharding', 'shard'],
    'preflight': ['hpcnn-scale', '--preflight'],
    'watchdog': ['hpcnn-scale', '--model', 'lenet5', '--batch', '2', '--iters', '50', '--warmup', '1', '--exchange', 'ring',
                 '--timeout', '5'],
    'stop-resume': ['hpcnn-scale', '--model', 'lenet5', '--batch', '2,3,4', '--iters', '100', '--warmup', '1',
                    '--exchange', 'ring', '--run-id', 'stop'],
}


def rank0_hwm_kib(program):
    """VmHWM of the process of `program` whose environment says it is rank 0 (0 when not found)."""
    best = 0
    for pid in os.listdir('/proc'):
        if not pid.isdigit():
            continue
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                if program.encode() not in f.read().split(b'\0')[0]:
                    continue
            with open(f'/proc/{pid}/environ', 'rb') as f:
                if b'OMPI_COMM_WORLD_RANK=0' not in f.read().split(b'\0'):
                    continue
            with open(f'/proc/{pid}/status') as f:
                for line in f:
                    if line.startswith('VmHWM:'):
                        best = max(best, int(line.split()[1]))
        except OSError:
            continue
    return best


def launch(build, args, ranks, out, env_extra=None):
    program = os.path.join(build, args[0])
    cmd = ['mpirun', '-np', str(ranks), '--oversubscribe', '--mca', 'mpi_yield_when_idle', '1', '-x', 'OMP_NUM_THREADS=1']
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    for k, v in (env_extra or {}).items():
        env[k] = v
        cmd += ['-x', k]
    cmd += [program] + args[1:] + ['--output', out]
    return program, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, text=True)


def follow(proc, program, t0, on_line=None):
    """Reads the job's output to its end: lines, when the table's header and its last row came, and
    rank 0's peak memory (sampled)."""
    hwm = [0]
    done = threading.Event()

    def sample():
        while not done.is_set():
            hwm[0] = max(hwm[0], rank0_hwm_kib(os.path.basename(program)))
            time.sleep(0.2)
    sampler = threading.Thread(target=sample)
    sampler.start()
    lines, header_at, last_row_at = [], None, None
    for line in proc.stdout:
        now = time.monotonic() - t0
        lines.append(line.rstrip('\n'))
        if on_line:
            on_line(line)
        if header_at is None and line.startswith(('model', 'exchange', 'rank')):
            header_at = now
        elif header_at is not None and not line.startswith(('points:', 'results:', ' ', '[')) and line.strip():
            last_row_at = now
    status = proc.wait()
    done.set()
    sampler.join()
    return status, lines, header_at, last_row_at, hwm[0]


def run_case(build, name, ranks, out):
    args = [str(max(1, ranks // 16)) if a == 'S' else str(max(ranks * 8, 256)) if a == 'L' else a for a in CASES[name]]
    env = {'HPCNN_TEST_FAULT': f'stop,exchange,3,{ranks // 2}'} if name == 'watchdog' else None
    t0 = time.monotonic()
    program, proc = launch(build, args, ranks, out, env)
    if name == 'stop-resume':
        def stop_when_journaled():  # SIGUSR1 once the first point is in the run's journal
            while proc.poll() is None:
                if any(f.startswith('point-') for _, _, fs in os.walk(out) for f in fs):
                    proc.send_signal(signal.SIGUSR1)
                    return
                time.sleep(0.05)
        threading.Thread(target=stop_when_journaled, daemon=True).start()
    status, lines, header_at, last_row_at, hwm = follow(proc, program, t0)
    end = time.monotonic() - t0
    note = ''
    if name == 'stop-resume':
        t1 = time.monotonic()
        _, resumed = launch(build, args + ['--resume'], ranks, out)
        rstatus, rlines, _, _, _ = follow(resumed, program, t1)
        note = f'stopped: exit {status}; resumed: exit {rstatus} in {time.monotonic() - t1:.1f} s'
        lines += rlines
        status = 0 if (status, rstatus) == (75, 0) else 1
    elif name == 'watchdog':
        watchdog_lines = sum('watchdog:' in l for l in lines)
        note = f'exit {status}, {watchdog_lines} watchdog line(s)'
        status = 0 if status == 1 and watchdog_lines == 1 else 1
    files = [os.path.join(d, f) for d, _, fs in os.walk(out) for f in fs]
    result = [f for f in files if f.endswith('.h5') and '/.' not in f]
    return {
        'case': name, 'ranks': ranks, 'status': status, 'wall_s': end,
        'startup_s': header_at if header_at is not None else float('nan'),
        'teardown_s': end - last_row_at if last_row_at is not None else float('nan'),
        'rank0_peak_mib': hwm / 1024.0, 'result_kib': sum(os.path.getsize(f) for f in result) / 1024.0,
        'files': len(files), 'lines': len(lines), 'tail': lines[-3:], 'note': note,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--hpcnn-build', required=True)
    ap.add_argument('--ranks', default='2,32,64,128,256')
    ap.add_argument('--cases', default=','.join(CASES))
    args = ap.parse_args()
    build = os.path.abspath(args.hpcnn_build)
    print(f"{'case':12s} {'P':>5s} {'ok':>3s} {'wall s':>7s} {'start s':>8s} {'end s':>6s} {'rank0 MiB':>9s} "
          f"{'result KiB':>10s} {'files':>5s} {'lines':>5s}  note")
    for name in args.cases.split(','):
        for p in (int(x) for x in args.ranks.split(',')):
            out = tempfile.mkdtemp(prefix='hpcnn-scale-ranks-')
            try:
                r = run_case(build, name, p, out)
            finally:
                shutil.rmtree(out, ignore_errors=True)
            print(f"{r['case']:12s} {r['ranks']:5d} {'yes' if r['status'] == 0 else 'NO':>3s} {r['wall_s']:7.1f} "
                  f"{r['startup_s']:8.2f} {r['teardown_s']:6.2f} {r['rank0_peak_mib']:9.1f} {r['result_kib']:10.1f} "
                  f"{r['files']:5d} {r['lines']:5d}  {r['note']}", flush=True)
            if r['status'] != 0:
                print('   ', '\n    '.join(r['tail']), file=sys.stderr)


if __name__ == '__main__':
    main()
