"""What every hpcnn ReFrame test shares (docs/ACCEPTANCE.md, "ReFrame").

A test runs one hpcnn executable (or jobscripts/acceptance.sh) into its stage folder, then
hpcnn-summary turns the result files into one CSV with fixed columns (SUMMARY_COLUMNS).
Sanity is hpcnn's own: the executable's exit status (a failed, diverged or wrong point makes it
non-zero) and every row's status `ok` with no wrong element. Performance variables are columns of
that CSV; references come from references.json (per test, per system:partition, with lower and
upper bounds), or the file named by $HPCNN_RFM_REFERENCES.
"""
import json
import os

import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.backends import getlauncher
from reframe.core.builtins import run_after, run_before, sanity_function, variable

# reframe/ (this package's parent) is on sys.path: the checks put it there.
from hpcnn_points import SUMMARY_COLUMNS, csv_rows, matches  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

EXIT_MARK = 'hpcnn exit status:'


def _default_bin():
    """$HPCNN_BIN, else the build tree of this checkout when it has the executables, else PATH."""
    if os.environ.get('HPCNN_BIN'):
        return os.environ['HPCNN_BIN']
    if os.access(os.path.join(REPO, 'hpcnn-summary'), os.X_OK):
        return REPO
    return ''


def _default_jobscripts():
    """$HPCNN_JOBSCRIPTS (set by the hpcnn module), else jobscripts/ of this checkout."""
    return os.environ.get('HPCNN_JOBSCRIPTS', os.path.join(REPO, 'jobscripts'))


def summary_rows(path):
    """The rows of the CSV file hpcnn-summary wrote."""
    with open(path, newline='') as f:
        return csv_rows(f)


@sn.deferrable
def figure(path, column, **where):
    """The column's value in the one row of the CSV that matches `where` (an error otherwise)."""
    rows = [r for r in summary_rows(path) if matches(r, where) and r.get(column)]
    if len(rows) != 1:
        raise sn.SanityError(f'{path}: {len(rows)} rows with {column} where {where}, want 1')
    return float(rows[0][column])


@sn.deferrable
def clean_points(path):
    """True when the CSV has points and every one has status ok and no wrong element."""
    rows = summary_rows(path)
    if not rows:
        raise sn.SanityError(f'{path}: no points')
    for r in rows:
        if r.get('status') not in ('', 'ok') or r.get('wrong') not in ('', '0'):
            raise sn.SanityError(f'{path}: point {r} is not clean (status {r.get("status")}, wrong {r.get("wrong")})')
    return True


def load_references(test_name):
    """The reference dict of a test from references.json: {'system:partition': {var: (v, lo, hi, unit)}}."""
    path = os.environ.get('HPCNN_RFM_REFERENCES', os.path.join(os.path.dirname(HERE), 'references.json'))
    with open(path) as f:
        table = json.load(f)
    return {part: {var: tuple(ref) for var, ref in refs.items()}
            for part, refs in table.get(test_name, {}).items()}


class HpcnnTest(rfm.RunOnlyRegressionTest):
    """One hpcnn run into the stage folder, its exit status kept, then the CSV summary."""
    valid_systems = ['*']
    valid_prog_environs = ['*']
    sourcesdir = None
    maintainers = ['hpcnn']
    # Where the executables are ('' : on PATH) and the job scripts.
    hpcnn_bin = variable(str, value=_default_bin())
    jobscripts = variable(str, value=_default_jobscripts())
    # Threads of single-process points ('default': the library's own choice).
    threads = variable(str, value='default')
    # Launcher options added when the partition's launcher is mpirun (e.g. --oversubscribe).
    mpirun_options = variable(typ.List[str], value=[])
    summary_csv = 'summary.csv'

    def program(self, name):
        return os.path.join(self.hpcnn_bin, name) if self.hpcnn_bin else name

    @run_before('run')
    def keep_exit_status_and_summarize(self):
        # The launcher line's status, before anything else can overwrite $?.
        self.postrun_cmds = [f'echo "{EXIT_MARK} $?"',
                             f'{self.program("hpcnn-summary")} --format csv --columns {SUMMARY_COLUMNS} '
                             f'. > {self.summary_csv}'] + self.postrun_cmds

    @run_before('run')
    def single_process_runs_unlaunched(self):
        # One rank needs no MPI launcher: mpirun -np 1 would bind every thread to one core.
        if self.num_tasks == 1:
            self.job.launcher = getlauncher('local')()
        elif self.job.launcher.registered_name == 'mpirun':
            self.job.launcher.options += self.mpirun_options

    @run_before('performance')
    def set_references(self):
        refs = load_references(self.display_name)
        if refs:
            self.reference = refs

    @sanity_function
    def validate(self):
        status = sn.extractsingle(rf'{EXIT_MARK} (\d+)', self.stdout, 1, int)
        return sn.all([sn.assert_eq(status, 0, msg='hpcnn exited {0}, want 0'),
                       clean_points(os.path.join(self.stagedir, self.summary_csv))])

    def csv_figure(self, column, **where):
        return figure(os.path.join(self.stagedir, self.summary_csv), column, **where)
