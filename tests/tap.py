"""The small TAP runner shared by the Python CLI tests.

@case("name") registers a test function; expect() fails it with a
message; run() executes every case in order, prints TAP ('ok N - name',
'not ok N - name' followed by '# ' lines), and returns the exit status.
A case that returns a string starting with "SKIP" is reported as skipped.
"""
import sys

_cases = []


def case(name):
    def wrap(fn):
        _cases.append((name, fn))
        return fn
    return wrap


def expect(cond, msg):
    if not cond:
        raise AssertionError(msg)


def run(cleanup=None):
    """Run every registered case; cleanup(failed) runs last, if given."""
    print(f"1..{len(_cases)}")
    failed = 0
    for i, (name, fn) in enumerate(_cases, 1):
        try:
            r = fn()
            skip = f" # {r}" if isinstance(r, str) and r.startswith("SKIP") \
                else ""
            print(f"ok {i} - {name}{skip}")
        except Exception as e:  # report and go on: every case counts
            failed += 1
            print(f"not ok {i} - {name}")
            for line in str(e).splitlines() or [repr(e)]:
                print(f"# {line}")
    sys.stdout.flush()
    if cleanup:
        cleanup(failed)
    return 1 if failed else 0
