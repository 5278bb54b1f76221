#!/usr/bin/env python3
"""fatbin_kernels.py - what the embedded fatbin of the course's kernels holds, without a GPU.

    fatbin_kernels.py OBJECT FATBIN "ARCH..." KERNEL...

OBJECT is the object mk/kernels.mk built into libcommon.a, FATBIN the fatbin
nvcc made beside it, ARCH... the architectures it was built for (CUDA_ARCHS)
and KERNEL... the names common/gpu_work.c looks up. Checked: the object holds
the fatbin's bytes unchanged; the fatbin holds one cubin (an ELF file of
machine code) per architecture, for exactly those architectures, each defining
every kernel; and PTX for the oldest one that enters every kernel. Prints one
line per finding and exits 1 when something is missing, 2 on bad input.

The fatbin container itself is not parsed (NVIDIA does not document it): the
cubins are found by their ELF magic number and read with the grader's ELF
reader. A cubin's architecture is in its ELF header flags, in the low byte in
CUDA's ELF ABI version 7 and the next byte in version 8 (as LLVM's ELF.h
defines them); --no-compress keeps the PTX readable.
"""

import os
import re
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "grader"))
from static_checks import ElfError, read_elf  # noqa: E402

ELF_MAGIC = b"\x7fELF"
EM_CUDA = 190
STT_FUNC, STB_GLOBAL, SHN_UNDEF = 2, 1, 0


def cubin_architecture(image):
    """The sm_ number of the cubin that starts image, or None where the header is unknown."""
    abi_version = image[8]
    flags, = struct.unpack_from("<I", image, 48)
    if abi_version == 7:
        return flags & 0xFF
    if abi_version == 8:
        return (flags >> 8) & 0xFF
    return None


def cubin_kernels(image):
    """The global functions the cubin at the start of image defines."""
    with tempfile.NamedTemporaryFile(suffix=".cubin") as f:
        f.write(image)
        f.flush()
        _sections, symbols = read_elf(f.name)
    return {name for name, bind, kind, shndx in symbols
            if kind == STT_FUNC and bind == STB_GLOBAL and shndx != SHN_UNDEF}


def cubins(fatbin):
    """(offset, image from there on) of every CUDA ELF image in the fatbin."""
    found, at = [], fatbin.find(ELF_MAGIC)
    while at >= 0:
        machine, = struct.unpack_from("<H", fatbin, at + 18)
        if machine == EM_CUDA:
            found.append((at, fatbin[at:]))
        at = fatbin.find(ELF_MAGIC, at + 1)
    return found


def check(object_path, fatbin_path, archs, kernels):
    """Lines of findings and whether all is well."""
    with open(object_path, "rb") as f:
        obj = f.read()
    with open(fatbin_path, "rb") as f:
        fatbin = f.read()
    lines, good = [], True

    def finding(ok, text):
        nonlocal good
        good = good and ok
        lines.append(("ok      " if ok else "MISSING ") + text)

    finding(len(fatbin) > 0 and fatbin in obj,
            "%s embeds the %d bytes of %s" % (object_path, len(fatbin), fatbin_path))
    found = cubins(fatbin)
    built = []
    for offset, image in found:
        arch = cubin_architecture(image)
        built.append(arch)
        name = "sm_%s" % arch if arch is not None else "the cubin at byte %d" % offset
        try:
            missing = sorted(set(kernels) - cubin_kernels(image))
        except ElfError as err:
            finding(False, "%s: unreadable (%s)" % (name, err))
            continue
        finding(not missing, "%s defines %s" % (name, ", ".join(kernels)) if not missing else
                "%s lacks %s" % (name, ", ".join(missing)))
    if None in built:
        finding(len(found) == len(archs), "%d cubins for the %d architectures of CUDA_ARCHS"
                % (len(found), len(archs)))
    else:
        finding(sorted(built) == sorted(archs), "one cubin for each of CUDA_ARCHS (%s); built: %s"
                % (" ".join(map(str, archs)), " ".join(map(str, sorted(built))) or "none"))
    oldest = min(archs)
    ptx_target = re.search(rb"\.target\s+sm_%d\b" % oldest, fatbin) is not None
    finding(ptx_target, "PTX for sm_%d, which newer GPUs compile" % oldest)
    not_entered = [k for k in kernels if not re.search(
        rb"\.entry\s+%s\s*\(" % re.escape(k.encode()), fatbin)]
    finding(ptx_target and not not_entered, "the PTX enters every kernel" if not not_entered
            else "the PTX lacks %s" % ", ".join(not_entered))
    return lines, good


def main(argv):
    if len(argv) < 4 or not all(a.isdigit() for a in argv[2].split()) or not argv[2].split():
        print(__doc__.split("\n\n")[1].strip(), file=sys.stderr)
        return 2
    try:
        lines, good = check(argv[0], argv[1], [int(a) for a in argv[2].split()], argv[3:])
    except OSError as err:
        print("fatbin_kernels: %s" % err, file=sys.stderr)
        return 2
    print("\n".join(lines))
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
