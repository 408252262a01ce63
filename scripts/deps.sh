#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
# deps.sh - install what a make target of jtr needs, and nothing else.
#
#   scripts/deps.sh [run|bench|test|vm]...   (no target: test)
#
#   run    what `make run` needs: build the programs and run `jtr run` on the system
#          python3 (no venv)
#   bench  what `make bench` needs: run's, the peers it is compared with (oslat,
#          cyclictest, sockperf) and the project venv ($VENV) bench.py runs in
#   test   what `make test` needs: all of the above and every test-only tool, and
#          the venv from requirements-dev.txt
#   vm     what `make test-vm` needs beyond test's: QEMU and a static busybox (the
#          tests boot Debian's kernels in virtual machines: tests/vm/vm.py)
#
# The distribution comes from /etc/os-release (ID, then ID_LIKE): Debian and Ubuntu
# install with apt-get, Fedora, RHEL and their relatives with dnf, each under its own
# package names (the table below). Missing packages are installed as root, or through
# sudo: all of them with one command first; if that fails, each alone, so that a name
# this release lacks stops nothing else. Then a summary names what is still missing
# and what that takes away. Exit status 0 when every package the targets require is
# there (an optional one may be missing: the summary says what is lost), 1 when one
# is not, 2 for a bad argument. Safe to run again: it only acts on what is missing.
# DEPS_ONLY=packages installs the packages and leaves the venv; DEPS_ONLY=venv makes
# the venv alone (make test builds the programs while the venv is made).
set -eu

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}
OS_RELEASE=${OS_RELEASE:-/etc/os-release}
KREL=$(uname -r)

# One package a line. For each target (run, bench, test): R, the target fails without
# it; o, the target runs without it and the summary says what is lost; -, not wanted;
# v in test's column: wanted by the vm target alone, which fails without it.
# Then its Debian, Ubuntu ("=": Debian's) and Fedora/RHEL names ("a,b": several
# packages, "a|b": the first of them that installs, "-": nothing to install), and
# what is lost without it. Ubuntu's perf comes with the running kernel's linux-tools
# (linux-tools-generic where there is none for this kernel), and so does bpftool
# before 25.04, which made it a package of its own.
UBUNTU_TOOLS="linux-tools-common,linux-tools-$KREL|linux-tools-generic"
#     Debian                    Ubuntu                     Fedora, RHEL                        without it
TABLE="
R R R gcc                       =                          gcc                                 nothing is built
R R R make                      =                          make                                nothing is built
R R R libc6-dev                 =                          glibc-devel                         nothing is built (the C library's headers)
R R R libnuma-dev               =                          numactl-devel                       jtr send, ping, pong, pub, sub and ipc are not built (libnuma)
R R R zlib1g-dev                =                          zlib-devel                          jtr send, ping, pong, pub, sub and ipc are not built (zlib: pub --compress), nor the kernel-event tracer
R R R python3                   =                          python3                             no jtr: the front end is Python
o o R clang                     =                          clang                               no kernel-event tracer (jtr-trace): jtr run attributes with perf, or not at all
o o R bpftool                   bpftool|linux-tools-common bpftool                             no kernel-event tracer (jtr-trace): jtr run attributes with perf, or not at all
o o R libbpf-dev                =                          libbpf-devel                        no kernel-event tracer (jtr-trace): jtr run attributes with perf, or not at all
o o R libelf-dev                =                          elfutils-libelf-devel               no kernel-event tracer (jtr-trace): jtr run attributes with perf, or not at all
o o o linux-perf                $UBUNTU_TOOLS              perf                                no perf backend: where BPF is not allowed jtr run does not attribute; --cross-check and the perf tests skip
o o R python3-numpy             =                          python3-numpy                       jtr compare does not run, and attribution of long runs is slower
o o R python3-matplotlib        =                          python3-matplotlib                  jtr report does not run (its plots)
- R R python3-venv              =                          -                                   no venv for make bench and the Python tests
- - R libcmocka-dev             =                          libcmocka-devel                     the C unit tests are not built
- - o systemtap-sdt-dev         =                          systemtap-sdt-devel                 the test of jtr run app --usdt skips (its test program is built without USDT probes)
- - R procps                    =                          procps-ng                           the tests that use sysctl and pgrep fail
- - R util-linux                =                          util-linux                          the tests that use unshare and setpriv fail
- - R libcap2-bin               =                          libcap                              make install-caps (setcap) and its test fail
- - R python3-prometheus-client =                          python3-prometheus_client           the tests that read jtr watch's metrics with the official client's parser fail
- R o rt-tests                  =                          realtime-tests|rt-tests             no oslat and cyclictest: make bench cannot compare with them, and their tests skip
- o o sockperf                  =                          sockperf                            make bench skips the UDP and TCP comparison with sockperf, and its test skips
- - o bpftrace                  =                          bpftrace                            the test of ebpf/bpftrace/*.bt skips
- - o tuned                     =                          tuned                               the tests that read jtr's profiles with tuned's own parser skip
- - o chromium                  chromium-browser           chromium                            the tests that look at the report pages in a browser skip
- - o gnuplot-nox               =                          gnuplot                             the tests that plot jtr's gnuplot files skip
- - o libhdrhistogram-java      =                          HdrHistogram                        the test that reads jtr export --hlog with HdrHistogram's Java reader skips
- - o default-jre-headless      =                          java-headless                       the test that reads jtr export --hlog with HdrHistogram's Java reader skips
- - o prometheus                =                          golang-github-prometheus|prometheus the test that scrapes jtr watch with a real Prometheus server skips
- - o ansible-core              =                          ansible-core                        the test of the Ansible role (ansible/) skips
- - o dpkg-dev                  =                          -                                   the test that builds and installs the Debian package (make deb) skips
- - o debhelper                 =                          -                                   the test that builds and installs the Debian package (make deb) skips
- - o dh-python                 =                          -                                   the test that builds and installs the Debian package (make deb) skips
- - o lintian                   =                          -                                   the lintian check of the Debian package (make deb) skips
- - o rpm                       =                          rpm-build                           the tests that parse (rpmspec) and build (rpmbuild, make rpm) the RPM spec dist/jtr.spec skip
- - o rpm2cpio                  =                          rpm                                 the test of the built RPM's watch unit (rpm2archive) skips
- - o git                       =                          git                                 the tests of pip install from a clone of the tree skip
- - o python3-pip               =                          python3-pip                         the test of pip install --user with the system python3 skips
- - o pipx                      =                          pipx                                the test of pipx install from a clone of the tree skips
- - o zsh                       =                          zsh                                 the test of the zsh completion skips
- - o man-db                    =                          man-db                              the tests of the man pages (make man) skip
- - o strace                    =                          strace                              the test that counts the writes of a run's result.json skips
- - o groff-base                =                          groff-base                          the tests of the man pages (make man) skip
- - o ccache                    =                          ccache                              make test compiles each of its builds from source (a clone, the .deb, the RPM, a fleet host) afresh: slower
- - v qemu-system-x86           =                          qemu-system-x86                     make test-vm cannot boot its virtual machines
- - v busybox-static            =                          busybox                             make test-vm has no initramfs for its virtual machines
"

# packages whose service is not to start or be enabled by the install (see below)
NO_START="tuned prometheus"
POLICY_RC_D=${POLICY_RC_D:-/usr/sbin/policy-rc.d}
SYSTEMD_DIR=${SYSTEMD_DIR:-/run/systemd/system}

TARGETS=${*:-test}
DEPS_ONLY=${DEPS_ONLY:-}
case $DEPS_ONLY in
	"" | packages | venv) ;;
	*) echo "deps: DEPS_ONLY='$DEPS_ONLY'; give packages, venv or nothing (both)" >&2; exit 2 ;;
esac
for t in $TARGETS; do
	case $t in
		run | bench | test | vm) ;;
		*) echo "deps: unknown target '$t'; the targets are run, bench, test and vm" >&2; exit 2 ;;
	esac
done

# the distribution's family (debian, ubuntu, fedora), from os-release's ID, then
# ID_LIKE; else from the package manager there is; else unknown
family() {
	if [ -r "$OS_RELEASE" ]; then
		for id in $(. "$OS_RELEASE"; echo "${ID:-} ${ID_LIKE:-}"); do
			case $id in
				ubuntu) echo ubuntu; return ;;
				debian) echo debian; return ;;
				fedora | rhel | centos) echo fedora; return ;;
			esac
		done
	fi
	if command -v dpkg-query >/dev/null 2>&1; then
		echo debian
	elif command -v rpm >/dev/null 2>&1 && command -v dnf >/dev/null 2>&1; then
		echo fedora
	else
		echo unknown
	fi
}
FAMILY=$(family)

# SEL: the packages the targets want, one a line: need (R or o), the key (Debian's
# name), this family's names, what is lost without it
SEL=$(printf '%s\n' "$TABLE" | while read -r run bench test deb ubu fed why; do
	[ -n "$deb" ] || continue
	need=-
	for t in $TARGETS; do
		case $t in
			run) n=$run ;; bench) n=$bench ;; test) n=$test ;;
			vm) n=-; [ "$test" != v ] || n=R ;;
		esac
		case $n$need in R*) need=R ;; o-) need=o ;; esac
	done
	[ "$need" != - ] || continue
	case $FAMILY in
		ubuntu) names=$ubu ;;
		fedora) names=$fed ;;
		*) names=$deb ;;
	esac
	[ "$names" = = ] && names=$deb
	echo "$need $deb $names $why"
done)

# this family's names of the wanted package whose Debian name is @1, or nothing
key_names() {
	printf '%s\n' "$SEL" | while read -r need key names why; do
		if [ "$key" = "$1" ]; then echo "$names"; fi
	done
}

# is one package (or a provide, on rpm) installed?
installed() {
	case $FAMILY in
		fedora) rpm -q --whatprovides "$1" >/dev/null 2>&1 ;;
		*) dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed" ;;
	esac
}

# the parts ("b|c") of @1 ("a,b|c") that are not installed, one a line
missing_parts() {
	if [ "$1" = - ]; then return 0; fi
	for part in $(echo "$1" | tr , ' '); do
		ok=""
		for alt in $(echo "$part" | tr '|' ' '); do
			if installed "$alt"; then ok=1; break; fi
		done
		[ -n "$ok" ] || echo "$part"
	done
}

# are all the packages of @1 ("a,b|c") installed?
names_installed() {
	[ -z "$(missing_parts "$1")" ]
}

pm_install() {
	case $FAMILY in
		fedora) $SUDO dnf install -y -q --setopt=install_weak_deps=False "$@" ;;
		*) $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends "$@" ;;
	esac
}

# every part still missing, one a line (each package once)
all_missing_parts() {
	printf '%s\n' "$SEL" | while read -r need key names why; do
		missing_parts "$names"
	done | awk '!seen[$0]++'
}

if [ "$DEPS_ONLY" = venv ]; then
	:
elif [ "$FAMILY" = unknown ]; then
	echo "deps: not a Debian, Ubuntu, Fedora or RHEL system (no ID in $OS_RELEASE that" \
		"jtr knows, no dpkg-query or dnf); install these, or their equivalents:" >&2
	printf '%s\n' "$SEL" | while read -r need key names why; do
		echo "  $key ($( [ "$need" = R ] && echo required || echo optional)): without it $why" >&2
	done
else
	parts=$(all_missing_parts)
	if [ -n "$parts" ]; then
		first=$(for p in $parts; do echo "${p%%|*}"; done)
		PM=$([ "$FAMILY" = fedora ] && echo "dnf install" || echo "apt-get install")
		SUDO=none
		if [ "$(id -u)" -eq 0 ]; then
			SUDO=""
		elif command -v sudo >/dev/null 2>&1; then
			SUDO="sudo"
		else
			echo "deps: not root and no sudo: install as root:" $PM $first >&2
		fi
	fi
	if [ -n "$parts" ] && [ "$SUDO" != none ]; then
		echo "deps: installing" $first "($FAMILY)"
		# a daemon that a Debian package's postinst would start: not while the deps
		# are installed (policy-rc.d says no to invoke-rc.d and deb-systemd-invoke),
		# and not enabled after (below, on every distribution): tuned would apply its
		# own profile to the machine about to be measured; the tests start their own
		# tuned and prometheus
		quiet=""
		for d in $NO_START; do
			n=$(key_names "$d")
			if [ -n "$n" ] && ! names_installed "$n"; then quiet="$quiet $d"; fi
		done
		added_policy=""
		if [ "$FAMILY" != fedora ]; then
			$SUDO apt-get update -q || echo "deps: apt-get update failed; installing from" \
				"the package lists there are" >&2
			if [ -n "$quiet" ] && [ ! -e "$POLICY_RC_D" ]; then
				# gone again however the install ends (an error, Ctrl-C)
				trap '$SUDO rm -f "$POLICY_RC_D"' EXIT
				trap 'exit 130' INT TERM HUP
				printf '#!/bin/sh\n# written by jtr scripts/deps.sh while it installs%s\nexit 101\n' \
					"$quiet" | $SUDO tee "$POLICY_RC_D" >/dev/null
				$SUDO chmod 755 "$POLICY_RC_D"
				added_policy=1
			fi
		fi
		# all at once; if that fails, each missing package alone (the first of its
		# alternatives that installs)
		if ! pm_install $first; then
			for part in $(all_missing_parts); do
				# an earlier one may have brought it
				if names_installed "$part"; then continue; fi
				for alt in $(echo "$part" | tr '|' ' '); do
					echo "deps: installing $alt alone"
					if pm_install "$alt"; then break; fi
				done
			done
		fi
		if [ -n "$added_policy" ]; then
			$SUDO rm -f "$POLICY_RC_D"
			trap - EXIT INT TERM HUP
		fi
		for d in $quiet; do
			names_installed "$(key_names "$d")" || continue
			if [ -d "$SYSTEMD_DIR" ] && command -v systemctl >/dev/null 2>&1; then
				$SUDO systemctl disable --now "$d" >/dev/null 2>&1 || true
			fi
			echo "deps: $d installed, its service not started nor enabled (start it with: systemctl enable --now $d)"
		done
	fi

	# the summary: what is still missing and what that takes away
	lost=$(printf '%s\n' "$SEL" | while read -r need key names why; do
		names_installed "$names" || echo "$need $names $why"
	done)
	if [ -n "$lost" ]; then
		echo "deps: not installed for make $(echo $TARGETS | sed 's/ / and make /g'):" >&2
		printf '%s\n' "$lost" | while read -r need names why; do
			echo "  $(echo "$names" | sed 's/,/ /g; s/|/ or /g') ($( [ "$need" = R ] &&
				echo required || echo optional)): $why" >&2
		done
		req=$(printf '%s\n' "$lost" | awk '$1 == "R" { gsub(/,/, " ", $2); printf " %s", $2 }')
		if [ -n "$req" ]; then
			echo "deps: required packages are missing:$req" >&2
			exit 1
		fi
	fi
fi

case " $TARGETS " in
	*" bench "* | *" test "*) [ "$DEPS_ONLY" != packages ] || exit 0 ;;
	*) exit 0 ;;    # make run runs on the system python3: no venv
esac

if [ ! -x "$VENV/bin/python" ] || ! cmp -s requirements-dev.txt "$VENV/.requirements"; then
	echo "deps: creating $VENV for the Python tests"
	"$PYTHON" -m venv "$VENV"
	# the packages' bytecode compiled after, a process per CPU (pip compiles one
	# file after another: 11 s of the 24 s it took here, beside make test's build)
	"$VENV/bin/python" -m pip install -q --disable-pip-version-check --no-compile \
		-r requirements-dev.txt
	"$VENV/bin/python" -m compileall -q -j 0 "$VENV/lib" >/dev/null || \
		echo "deps: some files of $VENV did not compile (pip would have left them so too)"
	cp requirements-dev.txt "$VENV/.requirements"
fi

# the JUnit schema CI servers read (Jenkins xunit's junit-10.xsd), for the tests of
# --junit: no wheel or Debian package installs it; pytest's sdist ships it, as
# pytest's own tests validate with it
XSD="$VENV/share/junit/junit-10.xsd"
case " $TARGETS " in *" test "*) ;; *) exit 0 ;; esac
if [ ! -s "$XSD" ]; then
	PYTEST=$(sed -n 's/^pytest==//p' requirements-dev.txt)
	SDIST=$(mktemp -d)
	"$VENV/bin/python" -m pip download -q --disable-pip-version-check --no-deps \
		--no-binary :all: -d "$SDIST" "pytest==$PYTEST"
	mkdir -p "$(dirname "$XSD")"
	tar -xzOf "$SDIST/pytest-$PYTEST.tar.gz" "pytest-$PYTEST/testing/example_scripts/junit-10.xsd" \
		> "$XSD.tmp"
	mv "$XSD.tmp" "$XSD"
	rm -rf "$SDIST"
fi

# the Prometheus operator's ServiceMonitor schema, for the test of
# dist/kubernetes/jtr-watch.yaml: the operator's CRD as its Go module carries it
# (jsonnet/prometheus-operator/servicemonitors-crd.json), from the Go module proxy
PROMOP=v0.85.0
CRD="$VENV/share/prometheus-operator/servicemonitors-crd-$PROMOP.json"
if [ ! -s "$CRD" ]; then
	mkdir -p "$(dirname "$CRD")"
	if "$VENV/bin/python" - "$PROMOP" "$CRD.tmp" <<'PY'
import io, sys, urllib.request, zipfile
v, out = sys.argv[1], sys.argv[2]
mod = "github.com/prometheus-operator/prometheus-operator"
with urllib.request.urlopen("https://proxy.golang.org/%s/@v/%s.zip" % (mod, v), timeout=120) as r:
    z = zipfile.ZipFile(io.BytesIO(r.read()))
with open(out, "wb") as f:
    f.write(z.read("%s@%s/jsonnet/prometheus-operator/servicemonitors-crd.json" % (mod, v)))
PY
	then
		mv "$CRD.tmp" "$CRD"
	else
		rm -f "$CRD.tmp"
		echo "deps: the Prometheus operator's module did not download: the test of the ServiceMonitor skips"
	fi
fi
