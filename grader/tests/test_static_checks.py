"""What a compiled submission may define and use, read from real objects built here."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, HERE)
import static_checks  # noqa: E402

ALLOW = static_checks.AllowList(os.path.join(HERE, "allowed-symbols.txt"),
                                extra_names={"cuda_error_describe", "cuda_check_set_handler"})
API = ["roundtrip_floats", "roundtrip_code", "roundtrip_k", "roundtrip_name"]
COURSE = {"expect_floats_arrived", "main", "trace_start"}


def reasons_for(source, flags=()):
    folder = tempfile.mkdtemp()
    try:
        with open(os.path.join(folder, "x.c"), "w") as f:
            f.write(source)
        obj = os.path.join(folder, "x.o")
        subprocess.run([os.environ.get("CC", "cc"), "-std=gnu11", "-O2", "-c", "x.c", "-o", obj] + list(flags),
                       cwd=folder, check=True)
        return static_checks.inspect_object(obj, API, COURSE, ALLOW)
    finally:
        shutil.rmtree(folder)


GOOD = """
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static int helper(int x) { return x * 2; }
static int counter;
int roundtrip_floats(const float *a, float *b, unsigned long n)
{
    memcpy(b, a, n * sizeof *a);
    if (n == 0) { fprintf(stderr, "nothing %d\\n", helper(counter++)); exit(1); }
    return 0;
}
"""


class Objects(unittest.TestCase):
    def test_ordinary_code_is_accepted(self):
        self.assertEqual(reasons_for(GOOD), [])

    def test_a_constructor_is_refused(self):
        reasons = reasons_for(GOOD + "__attribute__((constructor)) static void c(void) { puts(\"c\"); }\n")
        self.assertTrue(any(".init_array" in r for r in reasons), reasons)

    def test_a_destructor_is_refused(self):
        reasons = reasons_for(GOOD + "__attribute__((destructor)) static void d(void) { puts(\"d\"); }\n")
        self.assertTrue(any(".fini_array" in r for r in reasons), reasons)

    def test_a_global_that_is_not_the_api_is_refused(self):
        reasons = reasons_for(GOOD + "int shared_state;\nint extra(void) { return 1; }\n")
        self.assertEqual(len(reasons), 2, reasons)
        self.assertIn("make it static", reasons[0])

    def test_replacing_something_the_course_defines_is_refused(self):
        reasons = reasons_for(GOOD + "void trace_start(void) {}\n")
        self.assertIn("the course itself provides", reasons[0])

    def test_forbidden_calls_are_named(self):
        reasons = reasons_for(GOOD + "#include <unistd.h>\n#include <stdio.h>\n"
                              "static void f(void) { if (fork() == 0) fopen(\"x\", \"w\"); }\n"
                              "void (*keep)(void) = f;\n")
        text = " ".join(reasons)
        for word in ("fork", "fopen"):
            self.assertIn("uses %s," % word, text)

    def test_an_indirect_function_is_refused(self):
        reasons = reasons_for(GOOD + "static int impl(void) { return 1; }\n"
                              "static void *pick(void) { return (void *)impl; }\n"
                              "int chosen(void) __attribute__((ifunc(\"pick\")));\n")
        self.assertTrue(any("indirect function" in r for r in reasons), reasons)

    def test_a_system_call_instruction_is_refused(self):
        reasons = reasons_for(GOOD + "void s(void) { __asm__ volatile (\"syscall\"); }\n")
        self.assertTrue(any("system calls directly" in r for r in reasons), reasons)

    def test_an_odd_section_is_refused(self):
        reasons = reasons_for(GOOD + "__attribute__((section(\".gnu.linkonce.x\"))) static int x = 1;\n"
                              "int *keep_x = &x;\n")
        self.assertTrue(any(".gnu.linkonce.x" in r for r in reasons), reasons)

    def test_machine_code_in_a_code_section_is_refused(self):
        # What the compile guard refuses in the source (the section attribute), caught
        # again in the object, whatever put it there.
        for section in (".text.forged", ".text", ".text.unlikely"):
            reasons = reasons_for(GOOD + '__attribute__((section("%s"))) static const unsigned '
                                  'char code[] = {0x0f, 0x05};\n'
                                  'const void *roundtrip_code(void) { return code; }\n'
                                  % section)
            self.assertTrue(any("code section %s" % section in r and "(code)" in r
                                for r in reasons), (section, reasons))

    def test_data_made_executable_or_named_oddly_is_refused(self):
        reasons = reasons_for(GOOD + '__attribute__((section(".rodata.x,\\"ax\\",@progbits#")))'
                              ' static const int k = 1;\nconst int *roundtrip_k(void) { return &k; }\n')
        self.assertTrue(any("executable" in r and ".rodata.x" in r for r in reasons), reasons)

    def test_the_sections_of_split_functions_and_data_are_accepted(self):
        self.assertEqual(reasons_for(GOOD + "static const char *names[] = {\"a\", \"b\"};\n"
                                     "const char *roundtrip_name(int i) { return names[i]; }\n",
                                     ["-ffunction-sections", "-fdata-sections", "-fPIC"]),
                         [])


class Lists(unittest.TestCase):
    def test_forbidding_wins_over_allowing(self):
        self.assertTrue(ALLOW.allows("cudaMemcpy"))
        self.assertFalse(ALLOW.allows("cudaGetDriverEntryPoint"))
        self.assertFalse(ALLOW.allows("cuda_check_set_handler"))
        self.assertTrue(ALLOW.allows("cuda_error_describe"))
        self.assertFalse(ALLOW.allows("system"))

    def test_the_api_is_read_from_the_header_alone(self):
        aux = ("/* /usr/include/stdio.h:10:NC */ extern int printf (const char *, ...);\n"
               "/* ex/a.h:3:NC */ extern int a_one (int);\n"
               "/* ex/a.h:4:NC */ extern void (*a_handler (int, void (*)(int)))(int);\n")
        self.assertEqual(static_checks.header_api(aux, "ex/a.h"), ["a_one", "a_handler"])


if __name__ == "__main__":
    unittest.main()
