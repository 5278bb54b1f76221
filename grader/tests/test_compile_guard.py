"""The compiler launcher's reading of preprocessed text: includes, #line, assembly."""
import json
import os
import shutil
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import compile_guard  # noqa: E402

MAIN = "exercises/ch01-memory/roundtrip.c"
PREAMBLE = ('# 0 "%s"\n# 0 "<built-in>"\n# 0 "<command-line>"\n'
            '# 1 "/usr/include/stdc-predef.h" 1 3 4\n# 0 "<command-line>" 2\n# 1 "%s"\n'
            % (MAIN, MAIN))


def scan(body, allowed=lambda name: not name.startswith("/etc")):
    return compile_guard.scan_preprocessed(PREAMBLE + body, MAIN, allowed)


class Scanning(unittest.TestCase):
    def test_plain_c_with_headers_passes(self):
        body = ('# 1 "/usr/include/stdio.h" 1 3 4\nextern int printf (const char *, ...)\n'
                '  __asm__ ("" "printf");\n# 5 "%s" 2\nint f(void) { return 0; }\n' % MAIN)
        self.assertEqual(scan(body), [])

    def test_assembly_in_the_students_lines_is_refused(self):
        reasons = scan('void f(void) { __asm__ volatile ("syscall"); }\n')
        self.assertEqual(len(reasons), 1)
        self.assertIn("inline assembly (__asm__)", reasons[0])

    def test_words_inside_strings_do_not_count(self):
        self.assertEqual(scan('const char *s = "asm __asm__ \\" asm";\nchar c = \'a\';\n'), [])

    def test_comments_are_no_code_and_hide_none(self):
        # The preprocessed text keeps its comments (-C): their words do not count, and a line
        # marker written inside one is no marker, so it cannot hide the lines after it.
        self.assertEqual(scan("int a; /* asm(\"\") __attribute__((section(\"x\"))) */\n"
                              "// __asm__\n"), [])
        reasons = scan('/*\n# 1 "/usr/include/stdio.h" 1 3 4\n*/\nvoid f(void) { asm(""); }\n')
        self.assertTrue(any("inline assembly (asm)" in r for r in reasons))
        self.assertEqual(scan('const char *s = "/*";\nvoid f(void) { asm(""); }\n"*/";\n')[:1],
                         ["it uses inline assembly (asm): the grader runs no assembly: the "
                          "exercises are written in C"])

    def test_builtins_that_reach_the_stack_frames_are_refused(self):
        reasons = scan("void *f(void) { return __builtin_return_address(0); }\n")
        self.assertIn("__builtin_return_address", reasons[0])

    def test_an_include_outside_the_allowed_files_is_refused(self):
        reasons = scan('# 1 "/etc/passwd" 1\nroot:x:0:0\n# 3 "%s" 2\n' % MAIN)
        self.assertEqual(len(reasons), 1)
        self.assertIn("/etc/passwd", reasons[0])

    def test_line_directives_cannot_hide_the_students_lines(self):
        reasons = scan('# 1 "/usr/include/stdio.h"\nvoid f(void) { asm(""); }\n')
        self.assertTrue(any("#line" in r for r in reasons))
        reasons = scan('# 1 "<built-in>"\nvoid f(void) { asm(""); }\n')
        self.assertTrue(any("#line" in r for r in reasons))

    def test_attributes_that_reach_the_assembler_are_refused(self):
        reasons = scan('static int x __attribute__ ((__section__ (".text.x"))) = 1;\n'
                       '__attribute__((unused, alias("y"))) int z;\n')
        self.assertEqual(len(reasons), 2, reasons)
        self.assertIn("attribute section", reasons[0])
        self.assertIn("attribute alias", reasons[1])
        self.assertEqual(scan('__attribute__((unused)) static int section = 1;\n'), [])

    def test_pragmas_that_rename_symbols_are_refused(self):
        reasons = scan('#pragma redefine_extname f g\n#pragma GCC diagnostic push\n')
        self.assertEqual(len(reasons), 1, reasons)
        self.assertIn("redefine_extname", reasons[0])

    def test_escaped_file_names_are_read_back(self):
        self.assertEqual(compile_guard.unescape('a\\"b\\\\c\\101'), 'a"b\\cA')


class Directives(unittest.TestCase):
    """The student's file as written: what must be refused before the preprocessor runs."""

    def test_line_markers_and_line_are_refused_however_spelled(self):
        for text in ('# 1 "harness/checks/harness.h" 1\n', '/* c */ #line 10\n', '??=line 3\n',
                     '%: 7 "x.c"\n', '#li\\\nne 4\n'):
            reasons = compile_guard.directive_reasons(text)
            self.assertEqual(len(reasons), 1, text)
            self.assertIn("line marker", reasons[0])

    def test_includes_of_paths_devices_and_macros_are_refused(self):
        for text, said in (('#include "/dev/zero"\n', "/dev/zero"),
                           ('#include <../../solutions/a.c>\n', "../../solutions/a.c"),
                           ('#define Z "/tmp/x"\n#include Z\n', "a macro builds"),
                           ('#include_next <stdio.h>\n', "#include_next"),
                           ('#ident "x"\n', "#ident")):
            reasons = compile_guard.directive_reasons(text)
            self.assertEqual(len(reasons), 1, text)
            self.assertIn(said, reasons[0])

    def test_ordinary_directives_strings_and_comments_pass(self):
        text = ('#include "roundtrip.h"\n#include <stdio.h>\n#define N 4 /* # 1 "x" */\n'
                'const char *s = "# 1 \\"x\\"";\n// #line 3\n#if N > 2\n#endif\n')
        self.assertEqual(compile_guard.directive_reasons(text), [])


class Arguments(unittest.TestCase):
    def test_outputs_and_dependency_flags_are_dropped_for_preprocessing(self):
        kept, source = compile_guard.split_arguments(
            ["-Iharness", "-O2", "-MMD", "-MP", "-c", MAIN, "-o", "build/x.o", "-MF", "x.d"])
        self.assertEqual(kept, ["-Iharness", "-O2", MAIN])
        self.assertEqual(source, MAIN)



class Guarding(unittest.TestCase):
    """guard() itself, on a real compiler, in a folder laid out like a build view."""

    def setUp(self):
        self.view = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.view)
        os.makedirs(os.path.join(self.view, "exercises", "ch01-memory"))
        self.report = os.path.join(self.view, "guard.json")
        self.cwd = os.getcwd()
        os.chdir(self.view)
        self.addCleanup(os.chdir, self.cwd)

    def guard(self, text):
        with open(MAIN, "w") as f:
            f.write(text)
        status = compile_guard.guard(["cc"], ["-c", MAIN, "-o", "x.o"], MAIN, self.view,
                                     self.report, "x.i")
        with open(self.report) as f:
            return status, json.load(f)

    def test_the_compiler_gets_the_checked_text_not_the_file(self):
        status, _ = self.guard("int f(void) { return 1; }\n")
        self.assertEqual(status, 0)
        with open(MAIN, "w") as f:  # changed after the check: the compile must not see it
            f.write('__asm__("syscall");\n')
        args = compile_guard.compile_arguments(["-O2", "-MMD", "-MP", "-c", MAIN, "-o", "x.o"],
                                               MAIN, "x.i")
        self.assertEqual(args, ["-O2", "-c", "-o", "x.o", "-fpreprocessed", "-x", "cpp-output",
                                "x.i"])
        import subprocess
        subprocess.run(["cc"] + args, check=True)
        symbols = subprocess.run(["nm", "x.o"], stdout=subprocess.PIPE,
                                 universal_newlines=True).stdout
        self.assertIn(" T f", symbols)

    def test_a_fall_through_comment_reaches_the_compiler(self):
        # gcc reads "/* fall through */" from the comment: the saved text must keep it, or a
        # correct file that make check accepts fails under -Werror=implicit-fallthrough.
        status, _ = self.guard("int f(int x)\n{\n    int r = 0;\n    switch (x) {\n"
                               "    case 1:\n        r += 1;\n        /* fall through */\n"
                               "    case 2:\n        r += 2;\n    }\n    return r;\n}\n")
        self.assertEqual(status, 0)
        args = compile_guard.compile_arguments(["-Wall", "-Wextra", "-Werror", "-c", MAIN, "-o",
                                                "x.o"], MAIN, "x.i")
        import subprocess
        run = subprocess.run(["cc"] + args, stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(run.returncode, 0, run.stderr)

    def test_an_endless_macro_is_stopped_at_the_limits(self):
        status, report = self.guard("#define T(x) x x x x x x x x x x\n"
                                    "int a[] = { T(T(T(T(T(T(T(T(1,)))))))) };\n")
        self.assertEqual(status, 1)
        self.assertIn("multiplies itself", report["rejected"][0])

    def test_a_clean_file_goes_on_to_the_compiler(self):
        status, report = self.guard("#include <stddef.h>\nint f(void) { return 0; }\n")
        self.assertEqual((status, report["rejected"], report["preprocessor_failed"]),
                         (0, [], False))

    def test_a_missing_header_is_reported_in_the_preprocessors_words(self):
        # gcc deletes its output file when it fails: the guard must still say why.
        status, report = self.guard('#include "not_there.h"\n')
        self.assertEqual(status, 1)
        self.assertTrue(report["preprocessor_failed"])
        self.assertIn("not_there.h: No such file or directory", report["diagnostics"])


if __name__ == "__main__":
    unittest.main()
