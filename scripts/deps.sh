#!/bin/sh
# deps.sh - install what jtr needs to build and test, and nothing else.
#
# Debian packages that are missing are installed with apt-get (as root, or
# through sudo); the Python test tools go into a project venv ($VENV, default
# .venv) from requirements-dev.txt. Safe to run again: it only acts on what
# is missing or changed.
set -eu

PYTHON=${PYTHON:-python3}
VENV=${VENV:-.venv}

# compilers and headers; cmocka for the C unit tests; rt-tests for the oslat
# comparison in `make bench` and sockperf for its UDP/TCP ping-pong comparison;
# libcap2-bin for `make install-caps`; procps for
# sysctl; python3-venv for the test venv; clang, bpftool and the libbpf, libelf
# and zlib headers for the eBPF tracer; bpftrace for ebpf/bpftrace/*.bt; linux-perf
# for the perf backend of jtr run; tuned so the tests read jtr's profiles with
# tuned's own parser (its daemon is not started); util-linux for unshare;
# python3-numpy for jtr compare and fast attribution (jtr runs on /usr/bin/python3; the venv
# gets numpy from requirements-dev.txt); python3-matplotlib for the plots of
# jtr report (the venv gets matplotlib from requirements-dev.txt); chromium for
# the test that renders a report in a headless browser; gnuplot-nox for the test
# that gnuplot reads jtr's gnuplot files; libhdrhistogram-java and a JRE for the
# test that HdrHistogram's own Java log reader reads jtr export --hlog;
# sockperf, the peer of make bench's socket ping-pong
# python3-prometheus-client, with which jtr watch serves its metrics; prometheus,
# the real server the watch test scrapes it with (the test starts its own; a
# systemd host also gets the package's service, which scrapes only itself)
# ansible-core, whose ansible-playbook runs the fleet role (ansible/) in its test
PKGS="gcc make libc6-dev libcmocka-dev libnuma-dev rt-tests sockperf libcap2-bin procps python3-venv
clang libbpf-dev bpftool libelf-dev zlib1g-dev bpftrace linux-perf tuned util-linux
python3-numpy python3-matplotlib chromium gnuplot-nox libhdrhistogram-java
default-jre-headless python3-prometheus-client prometheus ansible-core"

# packages whose service is not to start or be enabled by the install (see below)
NO_START="tuned prometheus"
POLICY_RC_D=${POLICY_RC_D:-/usr/sbin/policy-rc.d}
SYSTEMD_DIR=${SYSTEMD_DIR:-/run/systemd/system}

if command -v dpkg-query >/dev/null 2>&1; then
	missing=""
	for p in $PKGS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		if [ "$(id -u)" -eq 0 ]; then
			SUDO=""
		elif command -v sudo >/dev/null 2>&1; then
			SUDO="sudo"
		else
			echo "deps: missing packages:$missing; install them as root:" >&2
			echo "  apt-get install$missing" >&2
			exit 2
		fi
		echo "deps: installing$missing"
		# a daemon that a package's postinst would start: not while the deps are
		# installed (policy-rc.d says no to invoke-rc.d and deb-systemd-invoke), and
		# not enabled after: tuned would apply its own profile to the machine about
		# to be measured; the tests start their own tuned and prometheus
		quiet=""
		for d in $NO_START; do
			case " $missing " in *" $d "*) quiet="$quiet $d" ;; esac
		done
		$SUDO apt-get update -q
		added_policy=""
		if [ -n "$quiet" ] && [ ! -e "$POLICY_RC_D" ]; then
			# gone again however the install ends (an error, Ctrl-C)
			trap '$SUDO rm -f "$POLICY_RC_D"' EXIT
			trap 'exit 130' INT TERM HUP
			printf '#!/bin/sh\n# written by jtr scripts/deps.sh while it installs%s\nexit 101\n' \
				"$quiet" | $SUDO tee "$POLICY_RC_D" >/dev/null
			$SUDO chmod 755 "$POLICY_RC_D"
			added_policy=1
		fi
		rc=0
		DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends \
			$missing || rc=$?
		if [ -n "$added_policy" ]; then
			$SUDO rm -f "$POLICY_RC_D"
			trap - EXIT INT TERM HUP
		fi
		[ "$rc" -eq 0 ] || exit "$rc"
		for d in $quiet; do
			if [ -d "$SYSTEMD_DIR" ] && command -v systemctl >/dev/null 2>&1; then
				$SUDO systemctl disable --now "$d" >/dev/null 2>&1 || true
			fi
			echo "deps: $d installed, its service not started nor enabled (start it with: systemctl enable --now $d)"
		done
	fi
else
	echo "deps: not a Debian system; make sure these (or their equivalents) are installed:" >&2
	echo "  $PKGS" >&2
fi

if [ ! -x "$VENV/bin/python" ] || ! cmp -s requirements-dev.txt "$VENV/.requirements"; then
	echo "deps: creating $VENV for the Python tests"
	"$PYTHON" -m venv "$VENV"
	"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r requirements-dev.txt
	cp requirements-dev.txt "$VENV/.requirements"
fi

# the JUnit schema CI servers read (Jenkins xunit's junit-10.xsd), for the tests of
# --junit: no wheel or Debian package installs it; pytest's sdist ships it, as
# pytest's own tests validate with it
XSD="$VENV/share/junit/junit-10.xsd"
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
