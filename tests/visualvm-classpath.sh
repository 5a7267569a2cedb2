#!/bin/sh
# Prints the Java classpath needed to use VisualVM's heap library
# (package org.graalvm.visualvm.lib.jfluid.heap, used by
# tests/java/VisualVMHistogram.java and bench/java/VisualVMBench.java).
#
# The library is one self-contained jar of Debian's `visualvm` package: it
# depends only on java.base and java.logging (checked with `jdeps -summary`),
# so nothing else from /usr/share/visualvm is needed.
#
# Usage: CP="$(sh tests/visualvm-classpath.sh)" || exit 1
# Set VISUALVM_HOME to use another VisualVM installation (default
# /usr/share/visualvm). Exits 1 with a message on stderr if the jar is missing.

home=${VISUALVM_HOME:-/usr/share/visualvm}
jar=$home/visualvm/modules/org-graalvm-visualvm-lib-jfluid-heap.jar

if [ ! -r "$jar" ]; then
    echo "visualvm-classpath.sh: $jar not found;" \
         "install Debian's visualvm package (apt-get install visualvm)" >&2
    exit 1
fi
echo "$jar"
