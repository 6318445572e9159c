#!/bin/sh
# Open MPI's remote launcher for the network-namespace "hosts" of tests/hosts.rs, given to mpirun
# as `--mca plm_rsh_agent PATH/netns-agent.sh`. mpirun runs it as it would run ssh:
# `netns-agent.sh HOST COMMAND...`, HOST as the hostfile names it (an address, 10.213.0.N).
#
# $XSORT_NETNS_HOSTS names the test's map, a line per host:
#   ADDRESS NETNS MOUNT_NS_FILE UTS_NS_FILE ROOT
# The agent runs COMMAND (Open MPI's orted line, one shell command as ssh would pass it) with
# `sh -c` inside that host's network, mount and UTS namespaces. The namespace files are reached
# through ROOT (/proc/TESTPID/root, the test process's view of the file system): mpirun runs inside
# host 0's own mount namespace, which was copied before the other hosts' namespace files were
# bound, so under its own view those files are plain empty files.
set -eu
if [ $# -lt 2 ]; then
  echo "netns-agent.sh: usage: HOST COMMAND..." >&2
  exit 255
fi
host=$1
shift
line=$(awk -v h="$host" '$1 == h { print; exit }' "${XSORT_NETNS_HOSTS:?netns-agent.sh: XSORT_NETNS_HOSTS is not set}")
if [ -z "$line" ]; then
  echo "netns-agent.sh: $host is not in $XSORT_NETNS_HOSTS" >&2
  exit 255
fi
# The map's paths hold no blanks (the test checks): split the line into its fields.
# shellcheck disable=SC2086
set -- $line "$@"
netns=$2 mnt=$3 uts=$4 root=$5
shift 5
exec nsenter --net="$root/run/netns/$netns" --mount="$root$mnt" --uts="$root$uts" --wd=/ sh -c "$*"
