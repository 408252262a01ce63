#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""vm - run a command of this tree inside a virtual machine that boots the kernel
users run (Debian's standard or PREEMPT_RT kernel, or a vmlinuz given) with any
kernel command line: the harness of the boot-time tuning and PREEMPT_RT tests
(tests/vm/, `make test-vm`), and a tool of its own:

    tests/vm/vm.py run [--kernel std|rt|PATH] [--cmdline WORDS] [--cpus N]
                       [--memory MB] [--out DIR] [--boot-dir DIR] [--timeout S]
                       -- COMMAND [ARG...]

What it does:
  - the kernel: `std` is Debian's linux-image-amd64, `rt` its linux-image-rt-amd64,
    each fetched by the package manager (apt-get download, into build/vm/) and
    unpacked there with dpkg -x: nothing is installed, the host's /boot is never
    touched. A PATH is a vmlinuz (its modules from --modules, if it needs any).
  - an initramfs of busybox (busybox-static) and the kernel's modules for virtio
    and 9p, written here (no cpio or mkinitramfs needed);
  - QEMU: KVM where /dev/kvm runs this kernel, else TCG (this host's /dev/kvm is
    PVM, which runs only kernels built for it), said in its first line. Under TCG
    one thread (tcg,thread=single: tracing a busy CPU hung a multi-threaded TCG
    guest while the tracer's attach patched kernel text) and tsc=reliable (else
    the guest falls back to the HPET, 2.5-4.8 us a clock read);
  - the host's / shared read-only over virtio-9p: the guest chroots into it, so
    this tree's programs and Python run there as they are; /tmp, /run, /var/tmp
    and /dev/shm are the guest's own (tmpfs), the command's folder kept visible
    where it is under one of them (a clone in /tmp); --out DIR (made if missing) is
    shared writable at the same path, so the results a command writes there are
    on the host when the VM is gone; --boot-dir DIR likewise, and the next boot
    of the same DIR reads its boot words from it (VMBOOT below);
  - the command runs as root in the tree's folder (the caller's working folder),
    its output on this process's output; its exit status is the harness's.
    The VM powers off after it; past --timeout QEMU is killed (exit 124), and on
    any failure or signal nothing is left running.

VMBOOT: the VM's own boot configuration, for `jtr tune apply --boot` inside it.
In the guest JTR_GRUB_DIR is DIR/grub.d (the grub drop-ins) and JTR_BOOT_STATE_DIR
DIR/state (what /var/lib/jtr is on a machine: the copy of jtr's snapshot that
outlives the reboot; jtr's state folder itself is the guest's /run/jtr, gone with
each boot, as on a machine); the harness reads the GRUB_CMDLINE_LINUX_DEFAULT
drop-ins jtr writes in grub.d (its 99-jtr.cfg) and adds their words to the next
boot's command line, as update-grub would.
"""
import argparse
import glob
import gzip
import io
import lzma
import os
import re
import shlex
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CACHE = os.path.join(ROOT, "build", "vm")
KERNELS = {"std": "linux-image-amd64", "rt": "linux-image-rt-amd64"}
# the modules the guest needs to reach the host's file system, and their deps
MODULES = ("9pnet_virtio", "9p", "virtio_pci", "virtio_blk")
BUSYBOX = ("/bin/busybox", "/usr/bin/busybox")
MARK = "jtr-vm:"        # the init's own lines on the console start with it
BASE_CMDLINE = "console=ttyS0 panic=-1 loglevel=3"
TCG_CMDLINE = "tsc=reliable"


class VMError(Exception):
    """What stops the harness before the VM runs (exit 2 as a tool)."""


def say(text):
    print("vm: " + text, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- the kernel

def _run(cmd, cwd=None):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise VMError("%s: %s" % (" ".join(cmd), (p.stderr or p.stdout).strip()[-600:]))
    return p.stdout


def package_of(meta):
    """The versioned kernel package a metapackage (linux-image-amd64) depends on."""
    out = _run(["apt-cache", "depends", "--no-recommends", "--no-suggests", meta])
    for line in out.splitlines():
        m = re.match(r"\s*Depends:\s*(linux-image-\S+)", line)
        if m and not m.group(1).endswith("-dbg"):
            return m.group(1)
    raise VMError("apt-cache depends %s names no linux-image package (apt-get update?)"
                  % meta)


def fetch_kernel(which, cache=CACHE):
    """(vmlinuz, modules folder, version) of Debian's @which kernel ("std", "rt"),
    downloaded and unpacked under @cache once (never installed)."""
    pkg = package_of(KERNELS[which])
    top = os.path.join(cache, pkg)
    done = os.path.join(top, ".unpacked")
    if not os.path.exists(done):
        os.makedirs(cache, exist_ok=True)
        work = tempfile.mkdtemp(prefix=".fetch-", dir=cache)
        try:
            say("fetching %s (apt-get download)" % pkg)
            _run(["apt-get", "download", pkg], cwd=work)
            debs = [f for f in os.listdir(work) if f.endswith(".deb")]
            if len(debs) != 1:
                raise VMError("apt-get download %s gave %s" % (pkg, debs or "nothing"))
            tree = os.path.join(work, "tree")
            _run(["dpkg-deb", "-x", os.path.join(work, debs[0]), tree])
            _prune(tree)
            shutil.rmtree(top, ignore_errors=True)
            os.rename(tree, top)
            open(done, "w").close()
        finally:
            shutil.rmtree(work, ignore_errors=True)
    boot = os.path.join(top, "boot")
    images = sorted(f for f in os.listdir(boot) if f.startswith("vmlinuz-"))
    if not images:
        raise VMError("%s has no boot/vmlinuz-*" % top)
    version = images[-1][len("vmlinuz-"):]
    return os.path.join(boot, images[-1]), os.path.join(top, "lib", "modules", version), version


def _prune(tree):
    """Keep of an unpacked kernel package its vmlinuz and the modules the guest
    loads (about 400 MB unpacked, 15 MB kept)."""
    for moddir in glob.glob(os.path.join(tree, "lib", "modules", "*")):
        keep = {os.path.join(moddir, m) for m in module_order(moddir)}
        for top, _, names in os.walk(os.path.join(moddir, "kernel")):
            for n in names:
                if os.path.join(top, n) not in keep:
                    os.unlink(os.path.join(top, n))
    shutil.rmtree(os.path.join(tree, "usr"), ignore_errors=True)


def _open_module(path):
    data = open(path, "rb").read()
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".gz"):
        return gzip.decompress(data)
    if path.endswith(".zst"):
        raise VMError("%s is zstd-compressed: not supported" % path)
    return data


def modinfo(data):
    """{key: value} of a kernel module's .modinfo section (@data: the ELF64 file)."""
    if data[:4] != b"\x7fELF" or data[4] != 2:
        return {}
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3a)
    sec = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab = sec[shstrndx][4]
    for name, _, _, _, off, size in sec:
        end = data.index(b"\0", strtab + name)
        if data[strtab + name:end] == b".modinfo":
            out = {}
            for item in data[off:off + size].split(b"\0"):
                k, eq, v = item.partition(b"=")
                if eq:
                    out.setdefault(k.decode(), v.decode("utf-8", "replace"))
            return out
    return {}


def module_order(moddir, wanted=MODULES):
    """The module files (relative to @moddir) to load for @wanted, each after those
    it needs (their .modinfo depends=, as depmod reads it); those built into the
    kernel (modules.builtin) are left out."""
    files = {}
    for top, _, names in os.walk(os.path.join(moddir, "kernel")):
        for n in names:
            if re.search(r"\.ko(\.\w+)?$", n):
                key = re.sub(r"\.ko(\.\w+)?$", "", n).replace("-", "_")
                files[key] = os.path.relpath(os.path.join(top, n), moddir)
    order = []

    def add(name, seen=()):
        path = files.get(name)
        if path is None or path in order or name in seen:
            return              # built in, or loaded already
        deps = modinfo(_open_module(os.path.join(moddir, path))).get("depends", "")
        for d in filter(None, deps.split(",")):
            add(d.replace("-", "_"), seen + (name,))
        order.append(path)

    for name in wanted:
        add(name)
    return order


# ---------------------------------------------------------------- the initramfs

def _cpio(entries):
    """A newc cpio archive (gzip'd) of @entries: (name, mode, data bytes or a
    symlink's target for S_IFLNK)."""
    out = io.BytesIO()
    ino = 1
    for name, mode, data in entries + [("TRAILER!!!", 0, b"")]:
        if isinstance(data, str):
            data = data.encode()
        nm = name.encode() + b"\0"
        hdr = "070701" + "".join("%08x" % v for v in (
            ino, mode, 0, 0, 1, 0, len(data), 0, 0, 0, 0, len(nm), 0))
        out.write(hdr.encode() + nm)
        out.write(b"\0" * ((4 - (110 + len(nm)) % 4) % 4))
        out.write(data)
        out.write(b"\0" * ((4 - len(data) % 4) % 4))
        ino += 1
    return gzip.compress(out.getvalue(), compresslevel=1)


INIT = r"""#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
for m in $(cat /modules.order); do
    insmod "/modules/$m" 2>/dev/null || echo "jtr-vm: insmod $m failed"
done
arg() { sed -n "s/.*jtrvm.$1=\([^ ]*\).*/\1/p" /proc/cmdline; }
OUT=$(arg out); BOOT=$(arg boot); TREE=$(arg tree)
mkdir -p /host
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=524288 host /host ||
    { echo "jtr-vm: cannot mount the host's file system"; poweroff -f; }
# the tree the command runs in, kept where the guest's own tmpfs mounts would hide it
case "$TREE" in /tmp/* | /run/* | /var/tmp/* | /dev/shm/*)
    mkdir -p /keep && mount --bind "/host$TREE" /keep ||
        echo "jtr-vm: cannot keep $TREE" ;;
esac
for d in proc sys dev tmp run var/tmp; do [ -d /host/$d ] || echo "jtr-vm: no /$d"; done
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/pts /host/dev/shm 2>/dev/null
mount -t devpts devpts /host/dev/pts
mount -t tmpfs shm /host/dev/shm
mount -t tmpfs tmp /host/tmp
mount -t tmpfs run /host/run
mount -t tmpfs vartmp /host/var/tmp
mount -t tracefs tracefs /host/sys/kernel/tracing 2>/dev/null
mount -t debugfs debugfs /host/sys/kernel/debug 2>/dev/null
mount -t bpf bpf /host/sys/fs/bpf 2>/dev/null
mount -t cgroup2 cgroup2 /host/sys/fs/cgroup 2>/dev/null
if [ -d /keep ]; then
    mkdir -p "/host$TREE" && mount --move /keep "/host$TREE" ||
        echo "jtr-vm: cannot keep $TREE"
fi
mkdir -p "/host$OUT" 2>/dev/null     # under the guest's /tmp, say
mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 out "/host$OUT" ||
    { echo "jtr-vm: cannot mount the results folder"; poweroff -f; }
if [ -n "$BOOT" ]; then
    mkdir -p "/host$BOOT" 2>/dev/null
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=524288 boot "/host$BOOT" ||
        { echo "jtr-vm: cannot mount the boot folder"; poweroff -f; }
fi
hostname jtr-vm
echo "jtr-vm: up $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r)"
chroot /host /bin/sh "$OUT/.vm/cmd.sh"
echo "$?" > "/host$OUT/.vm/rc"
sync
echo "jtr-vm: done"
poweroff -f
"""


def build_initramfs(moddir, path):
    """The initramfs at @path: busybox, /init and the modules (decompressed)."""
    bb = next((p for p in BUSYBOX if os.path.exists(p)), None)
    if bb is None:
        raise VMError("no busybox (Debian: busybox-static; scripts/deps.sh vm)")
    with open(bb, "rb") as f:
        busybox = f.read()
    if b"ld-linux" in busybox[:4096] or b"/lib64/ld-" in busybox:
        raise VMError("%s is linked dynamically: the initramfs needs busybox-static" % bb)
    entries = [(d, stat.S_IFDIR | 0o755, b"") for d in
               ("bin", "proc", "sys", "dev", "modules", "host")]
    entries.append(("bin/busybox", stat.S_IFREG | 0o755, busybox))
    entries.append(("init", stat.S_IFREG | 0o755, INIT))
    order = module_order(moddir) if moddir and os.path.isdir(moddir) else []
    names = []
    for rel in order:
        data = _open_module(os.path.join(moddir, rel))
        name = re.sub(r"\.ko(\.\w+)?$", ".ko", os.path.basename(rel))
        entries.append(("modules/" + name, stat.S_IFREG | 0o644, data))
        names.append(name)
    entries.append(("modules.order", stat.S_IFREG | 0o644, "\n".join(names) + "\n"))
    with open(path, "wb") as f:
        f.write(_cpio(entries))


# ---------------------------------------------------------------- boot words

GRUB_LINE = re.compile(r'^\s*GRUB_CMDLINE_LINUX(?:_DEFAULT)?="(?:\$GRUB_CMDLINE_LINUX'
                       r'(?:_DEFAULT)?\s*)?([^"$]*)"\s*$')


def boot_words(boot_dir):
    """The words the drop-ins in @boot_dir/grub.d add to the kernel command line
    (as update-grub would: the files in name order)."""
    d = os.path.join(boot_dir, "grub.d")
    words = []
    if not os.path.isdir(d):
        return words
    for name in sorted(os.listdir(d)):
        if not name.endswith(".cfg"):
            continue
        with open(os.path.join(d, name)) as f:
            for line in f:
                m = GRUB_LINE.match(line)
                if m:
                    words += m.group(1).split()
    return words


# ---------------------------------------------------------------- QEMU

def accel():
    """("kvm" or "tcg", why): KVM where /dev/kvm can run a distribution's kernel."""
    if not os.path.exists("/dev/kvm"):
        return "tcg", "no /dev/kvm"
    if os.path.exists("/sys/module/kvm_pvm"):
        return "tcg", ("this host's /dev/kvm is PVM (kvm_pvm), which runs only guest "
                       "kernels built for it")
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return "tcg", "/dev/kvm is not usable by this user"
    return "kvm", "/dev/kvm"


def qemu_cmd(kernel, initrd, cmdline, cpus, memory, out, boot_dir, how, disks=()):
    cmd = ["qemu-system-x86_64", "-nodefaults", "-no-user-config", "-no-reboot",
           "-display", "none", "-serial", "stdio", "-monitor", "none",
           "-m", str(memory), "-smp", str(cpus), "-kernel", kernel, "-initrd", initrd,
           "-append", cmdline,
           "-virtfs", "local,path=/,mount_tag=host,security_model=none,readonly=on,"
           "multidevs=remap",
           "-virtfs", "local,path=%s,mount_tag=out,security_model=none" % out]
    if boot_dir:
        cmd += ["-virtfs", "local,path=%s,mount_tag=boot,security_model=none" % boot_dir]
    for k, (path, queues) in enumerate(disks):
        cmd += ["-drive", "file=%s,if=none,id=disk%d,format=raw,readonly=on" % (path, k),
                "-device", "virtio-blk-pci,drive=disk%d,num-queues=%d" % (k, queues)]
    if how == "kvm":
        cmd += ["-accel", "kvm", "-cpu", "host"]
    else:
        cmd += ["-accel", "tcg,thread=single", "-cpu", "max"]
    return cmd


def run(command, kernel="std", cmdline="", cpus=2, memory=1024, out=None, boot_dir=None,
        timeout=300, cwd=None, env=None, modules=None, stream=None, disks=()):
    """Boot the VM, run @command (a list) in it, power off: (exit status, the
    console's text). @out: the results folder shared writable (a temporary one
    when None, removed after); @boot_dir: the VM's boot configuration (VMBOOT);
    @stream: a file the console is copied to as it comes (None: not shown);
    @disks: [(raw image, queues)] each a read-only virtio-blk disk (/dev/vda, ...)
    with that many request queues (its IRQs managed by the kernel)."""
    if shutil.which("qemu-system-x86_64") is None:
        raise VMError("no qemu-system-x86_64 (Debian: qemu-system-x86; scripts/deps.sh vm)")
    if kernel in KERNELS:
        vmlinuz, moddir, version = fetch_kernel(kernel)
    else:
        vmlinuz, moddir, version = kernel, modules, os.path.basename(kernel)
        if not os.path.isfile(vmlinuz):
            raise VMError("--kernel %s: no such file; give std, rt or a vmlinuz" % kernel)
    for what, path in (("--out", out), ("the command's folder", cwd or os.getcwd()),
                       ("--boot-dir", boot_dir)):
        if path and re.search(r"\s", path):
            raise VMError("%s %s has white space: the guest reads it from the kernel "
                          "command line; give a path without" % (what, path))
    own_out = out is None
    out = os.path.abspath(out or tempfile.mkdtemp(prefix="jtr-vm-out-"))
    os.makedirs(os.path.join(out, ".vm"), exist_ok=True)
    if boot_dir:
        boot_dir = os.path.abspath(boot_dir)
        for d in ("grub.d", "state"):
            os.makedirs(os.path.join(boot_dir, d), exist_ok=True)
    how, why = accel()
    words = [BASE_CMDLINE] + ([TCG_CMDLINE] if how == "tcg" else []) + \
        ([cmdline] if cmdline else []) + (boot_words(boot_dir) if boot_dir else []) + \
        ["jtrvm.out=%s" % out, "jtrvm.tree=%s" % os.path.abspath(cwd or os.getcwd())] + \
        (["jtrvm.boot=%s" % boot_dir] if boot_dir else [])
    line = " ".join(w for w in words if w)
    envs = dict(env or {})
    envs.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    if boot_dir:
        envs.update(JTR_GRUB_DIR=os.path.join(boot_dir, "grub.d"),
                    JTR_BOOT_STATE_DIR=os.path.join(boot_dir, "state"))
    script = "cd %s || exit 125\nexport %s\nexec %s\n" % (
        shlex.quote(cwd or os.getcwd()),
        " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in sorted(envs.items())),
        " ".join(shlex.quote(c) for c in command))
    rc_path = os.path.join(out, ".vm", "rc")
    with open(os.path.join(out, ".vm", "cmd.sh"), "w") as f:
        f.write(script)
    if os.path.exists(rc_path):
        os.unlink(rc_path)
    work = tempfile.mkdtemp(prefix="jtr-vm-")
    proc = None
    console = []
    try:
        initrd = os.path.join(work, "initrd.gz")
        build_initramfs(moddir, initrd)
        first = "vm: %s under %s (%s), %d CPUs, %d MB: %s" % (
            version, how.upper(), why, cpus, memory, line)
        print(first, file=sys.stderr, flush=True)
        console.append(first.encode() + b"\n")
        cmd = qemu_cmd(vmlinuz, initrd, line, cpus, memory, out, boot_dir, how, disks)
        t0 = time.monotonic()
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        os.set_blocking(proc.stdout.fileno(), False)
        buf = b""
        while True:
            if time.monotonic() - t0 > timeout:
                say("past --timeout %g s: QEMU killed" % timeout)
                return 124, b"".join(console).decode("utf-8", "replace")
            try:
                data = proc.stdout.read()
            except BlockingIOError:
                data = None
            if data:
                console.append(data)
                if stream is not None:
                    buf += data
                    *lines, buf = buf.split(b"\n")
                    for x in lines:
                        stream.write(x.decode("utf-8", "replace").rstrip("\r") + "\n")
                    stream.flush()
            elif data == b"" or proc.poll() is not None:
                rest = proc.stdout.read() or b""
                console.append(rest)
                if stream is not None and (buf + rest).strip():
                    stream.write((buf + rest).decode("utf-8", "replace") + "\n")
                break
            else:
                time.sleep(0.05)
        proc.wait()
        text = b"".join(console).decode("utf-8", "replace").replace("\r", "")
        say("powered off after %.1f s" % (time.monotonic() - t0))
        if not os.path.exists(rc_path):
            if MARK + " up" not in text:
                raise VMError("the VM did not come up (QEMU exit %d):\n%s" % (
                    proc.returncode, text[-3000:]))
            return 125, text
        with open(rc_path) as f:
            return int(f.read().strip() or 125), text
    finally:
        if proc is not None and proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait()
        shutil.rmtree(work, ignore_errors=True)
        if own_out:
            shutil.rmtree(out, ignore_errors=True)


def main(argv=None):
    examples = ("examples:\n"
                "  tests/vm/vm.py run --cmdline 'nohz_full=1 rcu_nocbs=1' --out /tmp/r -- \\\n"
                "      ./jtr run -c 1 -d 3 -o /tmp/r/gap\n"
                "  tests/vm/vm.py run --kernel rt --cpus 4 -- sh -c 'uname -v; cat "
                "/proc/cmdline'\n")
    ap = argparse.ArgumentParser(
        prog="tests/vm/vm.py", description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=examples)
    sub = ap.add_subparsers(dest="verb", required=True)
    r = sub.add_parser("run", help="boot a VM, run COMMAND in it, power off",
                       description="Boot a VM, run COMMAND in it (as root, in this folder), "
                       "power off; its exit status is COMMAND's (124: past --timeout).",
                       formatter_class=argparse.RawDescriptionHelpFormatter, epilog=examples)
    r.add_argument("--kernel", default="std",
                   help="std (Debian's linux-image-amd64), rt (linux-image-rt-amd64) or "
                   "a vmlinuz (default std)")
    r.add_argument("--modules", help="with --kernel PATH: its lib/modules/VERSION folder")
    r.add_argument("--cmdline", default="", help="words added to the kernel command line")
    r.add_argument("--cpus", type=int, default=2, help="vCPUs (default 2)")
    r.add_argument("--memory", type=int, default=1024, help="MB (default 1024)")
    r.add_argument("--out", help="results folder shared writable at the same path "
                   "(default: a temporary one, removed after)")
    r.add_argument("--boot-dir", help="the VM's boot configuration across runs (VMBOOT)")
    r.add_argument("--timeout", type=float, default=300, help="seconds (default 300)")
    r.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG...]")
    a = ap.parse_args(argv)
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        ap.error("give the command after --")
    if not 1 <= a.cpus <= 64:
        ap.error("--cpus %d: give 1 to 64" % a.cpus)
    try:
        rc, _ = run(command, kernel=a.kernel, cmdline=a.cmdline, cpus=a.cpus,
                    memory=a.memory, out=a.out, boot_dir=a.boot_dir, timeout=a.timeout,
                    modules=a.modules, stream=sys.stdout)
    except VMError as e:
        say(str(e))
        return 2
    except KeyboardInterrupt:
        say("stopped: the VM is gone")
        return 130
    return rc


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    sys.exit(main())
