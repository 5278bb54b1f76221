"""static_checks.py - what a submission's compiled object may contain, checked before linking.

The student's object is linked into the test program, so whatever it defines
or runs at load time would run in the test program's parent process, the one
that reports the results. Before linking, its ELF file is read here:

  - it may define (as global symbols) only the functions its exercise's header
    declares, and none the course itself defines: no main, no replacement for
    a harness check or a libc call, no global variable other code could reach;
  - it may have no constructor or destructor (.init_array, .fini_array, .ctors,
    .dtors, .init, .fini), no indirect function (whose resolver runs at load
    time), no executable stack, and no section outside an allow-list of the
    names the compiler itself gives; the code sections (.text and its
    variants, which the linker merges into the program's code by name) must
    be executable and hold functions alone, and nothing else may be
    executable: a constant array of machine code in a .text.* section is
    refused, whatever the source did to put it there;
  - it may use (as undefined symbols) only what grader/allowed-symbols.txt
    allows, plus the helpers in the course's common/ library;
  - its machine code may not contain a system call instruction.

Each refusal is a sentence for the feedback, naming the symbol or section.
"""

import difflib
import os
import re
import struct
import subprocess

# The names gcc and clang give a C file's sections (with -ffunction-sections and
# -fdata-sections, a symbol's name after the usual one). Code sections, data and
# everything else are told apart, since each has its own rule below.
CODE_SECTION = re.compile(r"^\.text(\.(unlikely|hot|startup|exit))?(\.[A-Za-z_][\w.$]*)?$")
DATA_SECTION = re.compile(r"""^(
      \.(data|bss|tdata|tbss)(\.rel(\.ro)?)?(\.local)?
    | \.rodata(\.(str\d+\.\d+|cst\d+))?
    )(\.[A-Za-z_][\w.$]*)?$""", re.X)
OTHER_SECTION = re.compile(r"""^(
      \.z?debug_\w+ | \.comment | \.note\.GNU-stack | \.note\.gnu\.property
    | \.eh_frame | \.group | \.symtab | \.strtab | \.shstrtab | \.symtab_shndx
    | \.llvm_addrsig | \.gnu\.attributes | )$""", re.X)
RELOCATIONS = re.compile(r"^\.rela?(\..+)$")
STT_OBJECT, STT_FUNC, STT_TLS, STT_COMMON = 1, 2, 6, 5
LOAD_TIME_SECTIONS = {
    ".init_array": "a constructor (code that runs before main, in the process that reports "
                   "the results)",
    ".preinit_array": "a constructor (code that runs before main)",
    ".ctors": "a constructor (code that runs before main)",
    ".init": "code in the program's start-up section",
    ".fini_array": "a destructor (code that runs after the tests, in the process that reports "
                   "the results)",
    ".dtors": "a destructor (code that runs at exit)",
    ".fini": "code in the program's exit section",
}
SYSTEM_CALL_INSTRUCTIONS = {"syscall", "sysenter", "int", "svc", "sc"}

WHY_FORBIDDEN = [
    (("pthread_exit", "atexit", "at_quick_exit", "on_exit", "__cxa_atexit"),
     "it ends a thread or arranges for code to run when the program ends; a library function "
     "returns its error to the caller instead"),
    (("fork", "vfork", "clone", "system", "popen", "daemon", "setsid", "setpgid", "setpgrp",
      "kill", "killpg", "tgkill", "ptrace", "prctl", "raise", "signal", "sigaction",
      "setrlimit", "prlimit", "execv", "execve", "execvp", "execvpe", "execl", "execle",
      "execlp", "fexecve", "posix_spawn", "posix_spawnp", "wait", "waitpid"),
     "graded code may not start, signal or change processes"),
    (("open", "open64", "openat", "fopen", "fopen64", "fdopen", "freopen", "creat", "write",
      "read", "pwrite", "pread", "unlink", "remove", "rename", "mkdir", "rmdir", "chdir",
      "symlink", "link", "truncate", "ftruncate", "mmap", "mmap64", "mprotect", "dup", "dup2",
      "dup3", "close", "fclose", "opendir", "tmpfile", "mkstemp", "chmod", "chown"),
     "graded code may not open, read or write files"),
    (("socket", "connect", "bind", "listen", "accept", "send", "sendto", "recv", "recvfrom",
      "getaddrinfo", "gethostbyname"),
     "graded code may not use the network"),
    (("dlopen", "dlsym", "dlmopen", "syscall", "setjmp", "longjmp", "_setjmp", "__longjmp_chk",
      "siglongjmp", "__sigsetjmp", "getcontext", "setcontext", "makecontext", "swapcontext"),
     "it loads code, calls the kernel directly or jumps between stack frames"),
    (("getenv", "secure_getenv", "setenv", "putenv", "unsetenv", "clearenv", "environ",
      "__environ"),
     "graded code may not read or change the environment"),
    (("cudaDeviceSetLimit", "cudaLibraryLoadData", "cudaLibraryLoadFromFile", "cudaMallocPitch",
      "cudaMalloc3D", "cudaMallocArray", "cudaMalloc3DArray", "cudaMallocMipmappedArray",
      "cudaMallocFromPoolAsync", "cudaMemPoolCreate", "cudaGraphCreate", "cudaIpcOpenMemHandle",
      "cudaIpcGetMemHandle", "cudaLogsDumpToFile", "cudaGetDriverEntryPoint",
      "cudaGetDriverEntryPointByVersion", "cudaGetExportTable", "cudaDeviceReset"),
     "it reaches device memory, other processes or files that the grader does not count or "
     "confine, and no exercise needs it (grader/allowed-symbols.txt names the runtime calls "
     "that are allowed)"),
]


class AllowList:
    """grader/allowed-symbols.txt: names, /regular expressions/, and !forbidden ones."""

    def __init__(self, path, extra_names=()):
        self.allow_names, self.allow_patterns = set(extra_names), []
        self.deny_names, self.deny_patterns = set(), []
        with open(path) as f:
            for line in f:
                for word in line.split("#", 1)[0].split():
                    deny = word.startswith("!")
                    word = word[1:] if deny else word
                    if len(word) > 2 and word.startswith("/") and word.endswith("/"):
                        pattern = re.compile(word[1:-1] + r"\Z")
                        (self.deny_patterns if deny else self.allow_patterns).append(pattern)
                    else:
                        (self.deny_names if deny else self.allow_names).add(word)

    def allows(self, name):
        if name in self.deny_names or any(p.match(name) for p in self.deny_patterns):
            return False
        return name in self.allow_names or any(p.match(name) for p in self.allow_patterns)


def why_forbidden(name):
    base = re.sub(r"^__(.*)_chk$", r"\1", name)
    for names, why in WHY_FORBIDDEN:
        if base in names or name in names:
            return why
    return "it is not among the calls an exercise needs (grader/allowed-symbols.txt lists them)"


# --- ELF -------------------------------------------------------------------------------

SHN_UNDEF, SHN_COMMON = 0, 0xFFF2
STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE = 1, 2, 10
STT_GNU_IFUNC = 10
SHF_WRITE, SHF_EXECINSTR = 0x1, 0x4
SHT_SYMTAB = 2


class ElfError(ValueError):
    pass


def read_elf(path):
    """(sections [(name, type, flags)], symbols [(name, bind, type, shndx)]) of an object."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        raise ElfError("not an ELF object")
    is64 = data[4] == 2
    endian = "<" if data[5] == 1 else ">"
    try:
        if is64:
            shoff, = struct.unpack_from(endian + "Q", data, 0x28)
            shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", data, 0x3A)
            header = endian + "IIQQQQIIQQ"
        else:
            shoff, = struct.unpack_from(endian + "I", data, 0x20)
            shentsize, shnum, shstrndx = struct.unpack_from(endian + "HHH", data, 0x2E)
            header = endian + "IIIIIIIIII"
        raw = [struct.unpack_from(header, data, shoff + i * shentsize) for i in range(shnum)]
        # (name, type, flags, addr, offset, size, link, info, addralign, entsize)
        def string_at(table, offset):
            start = raw[table][4] + offset
            return data[start:data.index(b"\0", start)].decode("utf-8", "replace")

        sections = [(string_at(shstrndx, s[0]), s[1], s[2]) for s in raw]
        symbols = []
        for s in raw:
            if s[1] != SHT_SYMTAB:
                continue
            entsize = s[9]
            for i in range(1, s[5] // entsize):
                at = s[4] + i * entsize
                if is64:
                    name, info, _other, shndx = struct.unpack_from(endian + "IBBH", data, at)
                else:
                    name, _value, _size, info, _other, shndx = struct.unpack_from(
                        endian + "IIIBBH", data, at)
                symbols.append((string_at(s[6], name), info >> 4, info & 0xF, shndx))
    except (struct.error, IndexError, ValueError) as err:
        raise ElfError("unreadable ELF object (%s)" % err)
    return sections, symbols


def system_call_instructions(path, objdump="objdump"):
    """Lines of the disassembly that make a system call."""
    run = subprocess.run([objdump, "-d", "--no-show-raw-insn", path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True, errors="replace")
    found = []
    for line in run.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) >= 2 and parts[0].strip().endswith(":"):
            mnemonic = parts[1].split()[0] if parts[1].split() else ""
            if mnemonic in SYSTEM_CALL_INSTRUCTIONS:
                found.append(parts[1].strip())
    return found


def defined_symbols(paths, nm="nm"):
    """Global symbols the course's own objects and archives define."""
    run = subprocess.run([nm, "-g", "--defined-only", "-P"] + list(paths),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         universal_newlines=True)
    names = set()
    for line in run.stdout.splitlines():
        fields = line.split()
        if len(fields) >= 2 and not fields[0].endswith(":") and not line.endswith(":"):
            names.add(fields[0])
    return names


def undefined_symbols(path, nm="nm"):
    """What an object uses without defining it."""
    run = subprocess.run([nm, "-u", "-P", path], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, universal_newlines=True)
    return {line.split()[0] for line in run.stdout.splitlines() if line.split()}


def inspect_object(path, api, course_defined, allow, objdump="objdump"):
    """Reasons to refuse the object at `path`; an empty list when it may be linked.

    api: the function names the exercise's header declares (the student defines them);
    course_defined: what the harness, common/ and the test define (never the student);
    allow: an AllowList for what the object may use.
    """
    try:
        sections, symbols = read_elf(path)
    except (OSError, ElfError) as err:
        return ["the compiled file could not be inspected (%s)" % err]
    reasons = []
    names = [s[0] for s in sections]
    for name, why in LOAD_TIME_SECTIONS.items():
        if name in names or any(n.startswith(name + ".") for n in names):
            reasons.append("it defines %s (section %s): nothing of yours may run outside the "
                           "calls the tests make" % (why, name))
    reasons += section_reasons(sections, symbols)
    if ".note.GNU-stack" not in names:
        reasons.append("it does not say that its stack need not be executable "
                       "(.note.GNU-stack is missing)")

    defined_wrongly, used_wrongly = [], []
    for name, bind, kind, shndx in symbols:
        if kind == STT_GNU_IFUNC:
            reasons.append("it defines an indirect function (%s), whose resolver runs at load "
                           "time" % name)
            continue
        if bind not in (STB_GLOBAL, STB_WEAK, STB_GNU_UNIQUE) or not name:
            continue
        if shndx == SHN_UNDEF:
            if name not in api and not allow.allows(name):
                used_wrongly.append(name)
        elif name in course_defined:
            defined_wrongly.append("it defines %s, which the course itself provides: yours "
                                   "would replace it in the test program" % name)
        elif name not in api:
            what = "variable" if shndx == SHN_COMMON else "symbol"
            close = difflib.get_close_matches(name, api, n=1, cutoff=0.8)
            defined_wrongly.append(
                "it defines %s, a global %s the exercise's header does not declare%s: make it "
                "static" % (name, what, " (is it %s, which the header declares, misspelt? "
                            "then spell it as the header does)" % close[0] if close else "")
                if api else "it defines %s, which the exercise does not declare" % name)
    reasons += defined_wrongly
    for name in sorted(set(used_wrongly)):
        reasons.append("it uses %s, which the grader does not allow: %s" % (name, why_forbidden(name)))
    instructions = system_call_instructions(path, objdump)
    if instructions:
        reasons.append("its machine code makes system calls directly (%s)" % instructions[0])
    return reasons


def section_reasons(sections, symbols):
    """Sections outside the allow-list, code where data would be, data where code would be."""
    reasons = []
    data_in = {}  # section index -> a data symbol defined there
    for name, _bind, kind, shndx in symbols:
        if kind in (STT_OBJECT, STT_TLS, STT_COMMON) and 0 < shndx < len(sections):
            data_in.setdefault(shndx, name)
    for index, (name, _type, flags) in enumerate(sections):
        relocated = RELOCATIONS.match(name)
        base = relocated.group(1) if relocated else name
        if name == ".note.GNU-stack" and flags & SHF_EXECINSTR:
            reasons.append("it needs an executable stack (a nested function whose address is "
                           "taken): write it as an ordinary static function")
        elif base in LOAD_TIME_SECTIONS or any(base.startswith(s + ".")
                                                for s in LOAD_TIME_SECTIONS):
            continue  # said above, with what it is
        elif not (CODE_SECTION.match(base) or DATA_SECTION.match(base) or
                  OTHER_SECTION.match(base)):
            reasons.append("it puts code or data in a section the grader does not allow (%s)"
                           % name)
        elif relocated:
            continue
        elif CODE_SECTION.match(name) and (not flags & SHF_EXECINSTR or flags & SHF_WRITE or
                                           index in data_in):
            reasons.append("it puts data%s in the code section %s, where the program would "
                           "run it as machine code" % (
                               " (%s)" % data_in[index] if index in data_in else "", name))
        elif flags & SHF_EXECINSTR and not CODE_SECTION.match(name):
            reasons.append("it makes the section %s executable, which only code sections are"
                           % name)
    return reasons


def header_api(aux_info_text, header):
    """Function names an aux-info listing (gcc -aux-info) says `header` declares."""
    names = []
    header_real = os.path.realpath(header)
    for line in aux_info_text.splitlines():
        match = re.match(r"/\* (.+?):\d+:[NO][CF] \*/ (.*)", line)
        if not match or os.path.realpath(match.group(1)) != header_real:
            continue
        name = re.search(r"(\w+)\s*\((?!\s*\*)", match.group(2))
        if name and name.group(1) not in names:
            names.append(name.group(1))
    return names
