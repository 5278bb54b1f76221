#!/usr/bin/env python3
"""refusals.py - what make grade would refuse a learner's file for, for make check to say first.

    python3 grader/refusals.py --object OBJ --aux AUX --header HEADER --dispatch DISPATCH_O \\
        --common LIBCOMMON --worker LIBWORKER -- CC FLAGS... -c SOURCE

make grade checks each submission twice before it links it: the compile guard reads the
source as the preprocessor does (compile_guard.check_source), and the compiled object is
inspected (static_checks.inspect_object). Both are asked here, of the file make check has just
built, with the same allow-list and in the same words, so that a learner hears of a refusal
from make check, never first from the gradebook. Prints each sentence on a line of its own,
nothing when make grade would accept the file; exits 0, or 2 for arguments it cannot use.
"""

import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compile_guard  # noqa: E402
import static_checks  # noqa: E402


def refusals(compile_command, obj, aux, header, dispatch, common, worker):
    """The sentences make grade would refuse the file with; [] when it would take it."""
    compiler, args = compile_command[:1], compile_command[1:]
    _, source = compile_guard.split_arguments(args)
    if source is None:
        raise ValueError("the compile command names no source file")
    reasons = compile_guard.check_source(compiler, args, source, os.getcwd())[0]
    if reasons:
        return reasons  # the grader stops at the source, as here
    with open(aux, errors="replace") as f:
        api = static_checks.header_api(f.read(), header)
    course_defined = static_checks.defined_symbols([worker, common, dispatch])
    allow = static_checks.AllowList(os.path.join(HERE, "allowed-symbols.txt"),
                                    extra_names=static_checks.defined_symbols([common]))
    return static_checks.inspect_object(obj, api, course_defined, allow)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name in ("object", "aux", "header", "dispatch", "common", "worker"):
        parser.add_argument("--" + name, required=True)
    parser.add_argument("compile", nargs=argparse.REMAINDER)
    options = parser.parse_args(argv)
    command = options.compile[1:] if options.compile[:1] == ["--"] else options.compile
    missing = [path for path in (options.object, options.aux, options.dispatch, options.common,
                                 options.worker) if not os.path.exists(path)]
    if not command or missing:
        print("refusals: %s" % ("no compile command after --" if not command else
                                "not built: " + ", ".join(missing)), file=sys.stderr)
        return 2
    try:
        found = refusals(command, options.object, options.aux, options.header,
                         options.dispatch, options.common, options.worker)
    except (OSError, ValueError) as err:
        print("refusals: %s" % err, file=sys.stderr)
        return 2
    for reason in found:
        print(reason.replace("\n", " "))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
