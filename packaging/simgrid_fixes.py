#!/usr/bin/env python3
"""simgrid_fixes.py SRC: two fixes to SimGrid's kernel that hpcnn-simulate's large points need,
applied by build_simgrid.sh to SimGrid's source before it builds it (docs/SIMULATION.md, "What it
costs"). Each is a statement changed in src/kernel/activity/ActivityImpl.cpp, written against
SimGrid 4.1; where a version's code differs the script names the fix it cannot apply and exits 1
(build_simgrid.sh then stops; SIMGRID_FIXES=no builds without them).

1. A test that completes an activity forgets it. ActivityImpl::test() finishes a completed
   activity, but only the actors waiting on it drop it from their set of activities: the actor that
   tested keeps it until it ends. The communication behind every request an MPI_Test completes
   (hpcnn's exchanges test their buckets' steps between layers, as hpcnn-scale does) then stays in
   that rank's set, with its memory, and every later message inserts into and erases from a set
   that keeps growing: a quarter of a 256-node ring simulation's time.
2. MPI_Waitany over N requests costs O(N) per completion, not O(N^2). When one activity of a
   wait-any completes, SimGrid unregisters the waiting call from all N activities, and each
   unregistration searches the actor's list of the N activities it waits on. The actor waits on
   nothing once its call is answered, so the list is emptied once. A parameter server waiting on
   24,576 pushes at once (1024 workers, 24 buckets) spends 96 % of its time in that search.
"""
import sys
from pathlib import Path

FIXES = [
    (
        "a completed test drops the activity from the tester",
        """    finish();
    issuer->exception_ = nullptr; // Do not propagate exception in that case
    return true;""",
        """    finish();
    issuer->activities_.erase(this); // hpcnn: the tester is done with it, as a waiter would be
    issuer->exception_ = nullptr; // Do not propagate exception in that case
    return true;""",
    ),
    (
        "a wait-any empties the waiting actor's list once",
        """    for (auto* act : activities)
      act->unregister_simcall(simcall);
""",
        """    for (auto* act : activities) { // hpcnn: not unregister_simcall(), which searches the list below
      auto mine = boost::range::find(act->simcalls_, simcall);
      if (mine != act->simcalls_.end())
        act->simcalls_.erase(mine);
    }
    simcall->issuer_->waiting_synchros_.clear();
""",
    ),
]


def main():
    if len(sys.argv) != 2:
        print("usage: simgrid_fixes.py SRC   (SimGrid's unpacked source)", file=sys.stderr)
        return 2
    path = Path(sys.argv[1]) / "src/kernel/activity/ActivityImpl.cpp"
    if not path.is_file():
        print(f"simgrid_fixes.py: {path} is missing: is {sys.argv[1]} SimGrid's source?", file=sys.stderr)
        return 1
    text = path.read_text()
    for name, before, after in FIXES:
        if after in text:
            print(f"==> SimGrid fix already in the source: {name}")
        elif text.count(before) == 1:
            text = text.replace(before, after)
            print(f"==> SimGrid fix applied: {name}")
        else:
            print(f"simgrid_fixes.py: this SimGrid's code differs from 4.1's where the fix goes: {name} "
                  "(SIMGRID_FIXES=no build_simgrid.sh ... builds without hpcnn's fixes)", file=sys.stderr)
            return 1
    path.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
