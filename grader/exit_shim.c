/* exit_shim.c - what a graded submission's exit(), _exit(), _Exit() and quick_exit() become.
 *
 * Before linking a submission, the grader renames these calls in the
 * student's object alone (objcopy --redefine-sym exit=grader_exit, ...) and
 * links this file in (LDLIBS). They end the process as asked: no exit status
 * makes a test pass (harness/runner.c counts a test as passed only when its
 * verdict arrives with the number the judge drew for it), so the renaming only
 * keeps the calls visible as the grader's own. Each prototype is here, since
 * no header declares them.
 */
#include <stdlib.h>
#include <unistd.h>

_Noreturn void grader_exit(int status);
_Noreturn void grader__exit(int status);
_Noreturn void grader__Exit(int status);
_Noreturn void grader_quick_exit(int status);

static int allowed_status(int status)
{
    return status;
}

void grader_exit(int status)
{
    exit(allowed_status(status));
}

void grader__exit(int status)
{
    _exit(allowed_status(status));
}

void grader__Exit(int status)
{
    _Exit(allowed_status(status));
}

void grader_quick_exit(int status)
{
    quick_exit(allowed_status(status));
}
