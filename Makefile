# heapsh - an interactive shell for Java heaps.
#   make            build ./heapsh
#   make deps       install missing Debian packages (apt-get)
#   make demo       build, dump the bundled demo program's heap, open the shell
#   make test       every test (C unit tests with cmocka, shell tests on real dumps)
#   make fuzz       libFuzzer harnesses and their seed corpora (docs/fuzzing.md);
#                   make fuzz-check runs them briefly (part of make test)
#   make bench      benchmarks against VisualVM's heap library (docs/performance.md)
#   make install    install under PREFIX (/usr/local); DESTDIR for staging; make uninstall
#   make READLINE=no   build with the plain line reader instead of GNU readline

CC      ?= gcc
READLINE ?= yes
CFLAGS  ?= -O2 -g
WARN     = -std=c11 -Wall -Wextra -Wshadow -Wmissing-prototypes -Wstrict-prototypes \
           -Wwrite-strings
CPPFLAGS += -D_GNU_SOURCE
BUILD    = build

PKGS     = zlib lua5.4 libffi libprotobuf-c jansson libmicrohttpd
ifeq ($(READLINE),yes)
PKGS    += readline
LE_SRC   = src/shell/le_readline.c
CPPFLAGS += -DHAVE_READLINE
else
LE_SRC   = src/shell/le_plain.c
endif
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS   := $(shell pkg-config --libs $(PKGS) 2>/dev/null) -ldl

LIB_SRC  = src/base/mem.c src/base/ctx.c src/base/wire.c src/base/big.c src/base/filemap.c src/base/packed.c src/base/radix.c src/base/u64map.c src/base/classname.c src/base/fmt.c src/base/suggest.c src/base/io.c src/base/pprof.c src/hprof/hprof.c src/hprof/redact.c \
           src/engine/dom.c src/engine/hgraph.c src/engine/domtree.c src/engine/path.c src/engine/suspects.c src/engine/waste.c \
           src/engine/idx.c src/engine/scc.c src/engine/dyn.c src/engine/dom_pprof.c src/dsl/arena.c src/dsl/builtins.c src/dsl/parse.c src/dsl/plan.c src/dsl/prog.c src/dsl/extern.c \
           src/dsl/eval.c src/dsl/eval_builtin.c src/dsl/eval_allocations.c src/dsl/eval_settype.c \
           src/dsl/eval_session.c src/dsl/heapif.c src/dsl/heapif_dump.c src/dsl/pushdown.c src/heap/heap_load.c src/heap/heap_sort.c src/heap/heap_classes.c src/heap/layout.c src/heap/heap.c src/heap/heap_model.c src/attach/attach.c \
           src/attach/jvmdir.c src/attach/proto.c src/attach/snapshot.c src/alloc/alloc.c src/alloc/flame.c src/alloc/alloc_pprof.c src/alloc/jfr.c \
           src/session/session.c src/session/live.c src/session/query.c src/session/state.c src/session/jvm.c src/session/explain.c
# The front ends (docs/architecture.md): the Lua module with the output modes
# both front ends use, the shell, which embeds Lua for :lua, and the exporter
# (src/serve: heapsh --serve, started by main.c).
LUA_SRC  = src/out/out.c src/lua/lbind_heap.c src/lua/lbind_object.c
SH_SRC   = src/shell/core.c src/shell/values.c src/shell/commands.c src/shell/alloc_cmds.c src/shell/engine_cmds.c src/shell/suspects_cmd.c src/shell/dyn_cmds.c src/shell/waste_cmds.c src/shell/report.c src/shell/redact_cmd.c src/shell/live.c src/shell/live_query.c \
           src/shell/query.c src/shell/lua_cmds.c src/shell/mcp.c \
           src/shell/main.c \
           src/serve/serve.c src/serve/watch.c src/serve/jvms.c \
           $(LE_SRC)
# Comparing dumps (heapsh diff, issue 38): the engine's comparison, the
# session's call, and its front ends in the shell and the Lua module.
LIB_SRC += src/engine/hdiff.c src/session/diff.c
LUA_SRC += src/lua/lbind_diff.c
SH_SRC  += src/shell/diff_cmd.c
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/profile.pb-c.o $(BUILD)/gen/jfr_classes.o
# pprof's profile.proto (src/alloc/proto) compiled by Debian's protoc-c.
GEN      = $(BUILD)/gen
CPPFLAGS += -I$(GEN)
LIB_A    = $(BUILD)/libheapsh.a
LUA_OBJ  = $(LUA_SRC:%.c=$(BUILD)/%.o)
SH_OBJ   = $(SH_SRC:%.c=$(BUILD)/$(READLINE)/%.o)

# Debian packages the build, the tests and the benchmarks need.
DEB_PKGS = gcc make pkg-config zlib1g-dev liblua5.4-dev libffi-dev libreadline-dev \
           libcmocka-dev openjdk-17-jdk-headless visualvm python3 python3-networkx tmux gzip \
           zsh groff-base chromium fonts-dejavu-core libh2-java libasm-java \
           libprotobuf-c-dev protobuf-c-compiler golang-go libjansson-dev \
           clang libclang-rt-14-dev libmicrohttpd-dev prometheus

.PHONY: all deps demo test unit bench fuzz fuzz-check fuzz-cov clean FORCE
BIN ?= heapsh
AGENT = libheapsh_agent.so
all: $(BIN) $(AGENT)

# The JVMTI agent, built against the installed JDK's headers.
JAVA_HOME ?= $(shell dirname $$(dirname $$(readlink -f $$(command -v javac))) 2>/dev/null)
AGENT_SRC = src/agent/agent.c src/agent/classes.c src/agent/histogram.c src/agent/snapshot.c \
            src/agent/instances.c src/agent/req.c src/agent/alloc.c src/agent/alloc_jvmti.c src/agent/instrument.c \
            src/agent/sites.c src/agent/rtcount.c src/agent/leaks.c src/agent/dump.c src/agent/analyze.c src/agent/lq.c \
            src/agent/lqheap.c src/agent/heapif_agent.c src/agent/hva_settype.c src/agent/dsl_stubs.c \
            src/dsl/prog.c src/dsl/plan.c src/dsl/builtins.c src/dsl/arena.c src/dsl/heapif.c src/dsl/eval.c \
            src/dsl/eval_builtin.c src/dsl/eval_session.c src/dsl/eval_settype.c \
            src/base/classname.c src/base/fmt.c src/base/wire.c src/base/mem.c src/base/ctx.c \
            src/base/suggest.c src/base/u64map.c
# The agent runs the query language's evaluator over its own heap view
# (src/agent/heapif_agent.c): no dump backend, so heapif.h's inline calls
# go through the view (HV_NO_DUMP); src/heap and src/engine stay out.
AGENT_HDR = src/agent/ag.h src/agent/recorder.h src/agent/sites.h src/agent/lq.h \
            src/agent/heapif_agent.h src/agent/hva_internal.h src/dsl/prog.h src/dsl/plan.h src/dsl/builtins.h \
            src/dsl/ast.h src/dsl/heapif.h src/dsl/eval.h src/dsl/eval_internal.h \
            src/dsl/value.h src/dsl/arena.h src/base/wire.h src/base/ctx.h src/base/mem.h
# Exact recordings rewrite classes with ASM (Debian's libasm-java) inside the
# JVM: the agent's Java classes and ASM's are built into the agent as data.
ASM_JAR ?= /usr/share/java/asm.jar
ASM_COMMONS_JAR ?= /usr/share/java/asm-commons.jar
AGENT_JAVA = src/agent/java/heapsh/agent/Rt.java src/agent/java/heapsh/agent/Instrument.java
$(BUILD)/agent/classes.c: $(AGENT_JAVA) src/agent/java/embed.py
	rm -rf $(BUILD)/agent/classes
	@mkdir -p $(BUILD)/agent/classes
	javac --release 11 -nowarn -cp $(ASM_JAR):$(ASM_COMMONS_JAR) -d $(BUILD)/agent/classes \
	  $(AGENT_JAVA)
	python3 src/agent/java/embed.py $@ $(BUILD)/agent/classes $(ASM_JAR) \
	  $(ASM_COMMONS_JAR):org/objectweb/asm/commons/LocalVariablesSorter
$(AGENT): $(AGENT_SRC) $(AGENT_HDR) $(BUILD)/agent/classes.c
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -DHV_NO_DUMP -fPIC -shared -fvisibility=hidden \
	  -isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux -o $@ $(AGENT_SRC) \
	  $(BUILD)/agent/classes.c -pthread -lm

# le-mode changes when READLINE does, so the binary is relinked.
$(BUILD)/le-mode: FORCE
	@mkdir -p $(BUILD)
	@echo $(READLINE) | cmp -s - $@ || echo $(READLINE) > $@

# libheapsh.a: the library under the front ends (src/heapsh.h), for the
# shell, the unit tests and anyone embedding heapsh.
$(LIB_A): $(LIB_OBJ)
	@rm -f $@
	$(AR) rcs $@ $(LIB_OBJ)

$(BIN): $(LIB_A) $(LUA_OBJ) $(SH_OBJ) $(BUILD)/le-mode
	$(CC) $(CFLAGS) -o $@ $(SH_OBJ) $(LUA_OBJ) $(LIB_A) $(PKG_LIBS) -lm -pthread

$(GEN)/profile.pb-c.c $(GEN)/profile.pb-c.h: src/alloc/proto/profile.proto
	@mkdir -p $(GEN)
	protoc-c --c_out=$(GEN) -Isrc/alloc/proto $<
# The JFR reader (src/alloc/jfr.c runs it with the JDK's java), built into heapsh as data.
JFR_JAVA = src/alloc/java/heapsh/jfr/JfrAlloc.java
$(GEN)/jfr_classes.c: $(JFR_JAVA) src/agent/java/embed.py
	rm -rf $(GEN)/jfr
	@mkdir -p $(GEN)/jfr
	javac --release 11 -nowarn -d $(GEN)/jfr $(JFR_JAVA)
	python3 src/agent/java/embed.py --name=alc_jfr_classes $@ $(GEN)/jfr
$(GEN)/jfr_classes.o: $(GEN)/jfr_classes.c
	$(CC) $(CFLAGS) -c -o $@ $<
# Generated code: built without our warnings (protoc-c's own style).
$(GEN)/profile.pb-c.o: $(GEN)/profile.pb-c.c $(GEN)/profile.pb-c.h
	$(CC) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -c -o $@ $<
$(BUILD)/src/base/pprof.o: $(GEN)/profile.pb-c.h

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c -o $@ $<

$(BUILD)/$(READLINE)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

# deps: install what is missing; as root with apt-get, else print the command.
deps:
	@missing=""; for p in $(DEB_PKGS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; done; \
	if [ -z "$$missing" ]; then echo "deps: all installed"; \
	elif [ "$$(id -u)" = 0 ]; then \
	  echo "deps: installing$$missing"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	else echo "deps: missing$$missing; run: sudo apt-get install -y$$missing"; exit 1; fi

JAVA_OUT = $(BUILD)/java
DEMO     = $(BUILD)/demo.hprof

$(JAVA_OUT)/KnownHeap.class: tests/java/KnownHeap.java
	@mkdir -p $(JAVA_OUT)
	javac -d $(JAVA_OUT) $<

$(DEMO): $(JAVA_OUT)/KnownHeap.class
	rm -f $@
	java -cp $(JAVA_OUT) KnownHeap dump $@

# demo: the shell on the demo heap; a scripted tour when stdin is not a terminal.
demo: deps
	$(MAKE) heapsh $(AGENT) $(DEMO)
	@if [ -t 0 ]; then ./heapsh $(DEMO); else ./heapsh --echo -f docs/tour.hsh $(DEMO); fi

# puppeteer-core from npm drives Debian's Chromium in the browser tests (tests/flame_check.js).
PUPPETEER = $(BUILD)/node/node_modules/puppeteer-core/package.json
$(PUPPETEER):
	@mkdir -p $(BUILD)/node
	npm install --prefix $(BUILD)/node --no-audit --no-fund --loglevel=error puppeteer-core@24.43.1

# The official MCP TypeScript SDK drives heapsh --mcp in tests/t_mcp.sh (tests/mcp_client.mjs).
# After puppeteer-core: two npm installs into one folder at once (make -j) collide.
MCP_SDK = $(BUILD)/node/node_modules/@modelcontextprotocol/sdk/package.json
$(MCP_SDK): | $(PUPPETEER)
	@mkdir -p $(BUILD)/node
	npm install --prefix $(BUILD)/node --no-audit --no-fund --loglevel=error \
	  @modelcontextprotocol/sdk@1.32.2

test: deps
	$(MAKE) heapsh $(AGENT) $(PUPPETEER) $(MCP_SDK)
	$(MAKE) unit
	$(MAKE) READLINE=no BIN=$(BUILD)/heapsh-plain
	bash tests/run.sh
	$(MAKE) fuzz-check

UNIT_TESTS = $(patsubst tests/unit/%.c,$(BUILD)/unit/%,$(wildcard tests/unit/test_*.c))
$(BUILD)/unit/%: tests/unit/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -o $@ $< $(LIB_A) \
	  $$(pkg-config --cflags --libs cmocka) $(PKG_LIBS) -lm -pthread -pthread

# The dynamic-size benchmark driver (bench/dyn.sh).
$(BUILD)/bench/dyn_bench: bench/dyn_bench.c $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) $(PKG_CFLAGS) -o $@ $< $(LIB_OBJ) $(PKG_LIBS) -lm -pthread

# The packed index arrays' micro-benchmark (docs/format-limits.md).
$(BUILD)/bench/packed_bench: bench/packed_bench.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -o $@ $< $(LIB_A) -lm -pthread

# The synthetic dump generator (bench/gen.sh, tests/t_gen.sh): standalone C.
$(BUILD)/bench/gen_hprof: bench/gen_hprof.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) $(CPPFLAGS) -o $@ $<

# The small native library test_extern binds and calls (tests/unit/extlib.c).
$(BUILD)/unit/libhsext.so: tests/unit/extlib.c
	@mkdir -p $(dir $@)
	$(CC) $(WARN) $(CFLAGS) -shared -fPIC -o $@ $<
$(BUILD)/unit/test_extern: $(BUILD)/unit/libhsext.so

unit: $(UNIT_TESTS)
	@for t in $(UNIT_TESTS); do echo "== $$t"; $$t || exit 1; done

bench: deps heapsh $(BUILD)/bench/gen_hprof
	bash bench/run.sh
	bash bench/queries.sh
	bash bench/dyn.sh
	bash bench/live.sh
	bash bench/lua.sh
	bash bench/suspects.sh
	bash bench/alloc.sh
	bash bench/alloc_start.sh
	bash bench/gen.sh
	bash bench/outofcore.sh || test $$? -eq 2	# 2: no root or no memory cgroup: skipped

# Fuzzing: libFuzzer harnesses (tests/fuzz/fuzz_*.c) built with clang,
# AddressSanitizer and UndefinedBehaviorSanitizer, over the library's own
# objects compiled again with coverage; fuzz_wire adds the agent's request
# readers, built from the agent's sources. tests/fuzz/run.sh makes the
# corpora and runs them.
FUZZ_CC      ?= clang
FUZZ_DIR      = $(BUILD)/fuzz
FUZZ_FLAGS    = -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
                -fno-sanitize-recover=undefined
FUZZ_TARGETS  = hprof index query wire lua jfr redact
FUZZ_BINS     = $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz_%)
FUZZ_LIB_OBJ  = $(LIB_SRC:%.c=$(FUZZ_DIR)/obj/%.o) $(FUZZ_DIR)/obj/$(GEN)/profile.pb-c.o \
                $(FUZZ_DIR)/obj/$(GEN)/jfr_classes.o
FUZZ_LUA_OBJ  = $(LUA_SRC:%.c=$(FUZZ_DIR)/obj/%.o)
FUZZ_AGENT_OBJ = $(FUZZ_DIR)/obj/src/agent/req.o
JNI_INC       = -isystem $(JAVA_HOME)/include -isystem $(JAVA_HOME)/include/linux
FUZZ_HDRS     = tests/fuzz/fuzz.h tests/fuzz/tiny_heap.h tests/unit/hprof_writer.h

$(FUZZ_DIR)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -D_GNU_SOURCE -I$(GEN) $(PKG_CFLAGS) \
	  -MMD -MP -c -o $@ $<
$(FUZZ_DIR)/obj/src/base/pprof.o: $(GEN)/profile.pb-c.h
$(FUZZ_DIR)/fuzz_lua: tests/fuzz/fuzz_lua.c $(FUZZ_LIB_OBJ) $(FUZZ_LUA_OBJ) $(FUZZ_HDRS)
	$(FUZZ_CC) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer -D_GNU_SOURCE $(PKG_CFLAGS) -o $@ $< \
	  $(FUZZ_LIB_OBJ) $(FUZZ_LUA_OBJ) $(PKG_LIBS) -lm -pthread
# The agent's request readers (JVM-free) join the library's objects in fuzz_wire.
$(FUZZ_DIR)/obj/src/agent/%.o: src/agent/%.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -D_GNU_SOURCE $(JNI_INC) \
	  -MMD -MP -c -o $@ $<
$(FUZZ_DIR)/fuzz_wire: tests/fuzz/fuzz_wire.c $(FUZZ_LIB_OBJ) $(FUZZ_AGENT_OBJ) $(FUZZ_HDRS) \
	  src/agent/ag.h
	$(FUZZ_CC) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer -D_GNU_SOURCE $(JNI_INC) $(PKG_CFLAGS) \
	  -o $@ $< $(FUZZ_LIB_OBJ) $(FUZZ_AGENT_OBJ) $(PKG_LIBS) -lm -pthread
$(FUZZ_DIR)/fuzz_%: tests/fuzz/fuzz_%.c $(FUZZ_LIB_OBJ) $(FUZZ_HDRS)
	$(FUZZ_CC) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer -D_GNU_SOURCE $(PKG_CFLAGS) -o $@ $< \
	  $(FUZZ_LIB_OBJ) $(PKG_LIBS) -lm -pthread

fuzz: deps
	$(MAKE) $(FUZZ_BINS)
	bash tests/fuzz/run.sh corpus
fuzz-check: fuzz
	bash tests/fuzz/run.sh check
# The harnesses built for line coverage (tests/fuzz/run.sh coverage T).
fuzz-cov:
	$(MAKE) FUZZ_DIR=$(BUILD)/fuzz-cov FUZZ_FLAGS="-O0 -g -fprofile-instr-generate \
	  -fcoverage-mapping" $(FUZZ_TARGETS:%=$(BUILD)/fuzz-cov/fuzz_%)

clean:
	rm -rf $(BUILD) heapsh $(AGENT)

# install / uninstall: PREFIX (default /usr/local) and DESTDIR as usual. The
# agent goes to lib/heapsh/, where heapsh looks for it (src/shell/live.c).
PREFIX  ?= /usr/local
BINDIR   = $(DESTDIR)$(PREFIX)/bin
AGENTDIR = $(DESTDIR)$(PREFIX)/lib/heapsh
DATADIR  = $(DESTDIR)$(PREFIX)/share/heapsh
MANDIR   = $(DESTDIR)$(PREFIX)/share/man/man1
BASHCOMPDIR = $(DESTDIR)$(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  = $(DESTDIR)$(PREFIX)/share/zsh/site-functions
LUA_FILES   = $(wildcard lua/*.lua)
LUA_LIB     = $(wildcard lua/lib/*.lua)
QUERY_FILES = $(wildcard queries/*.hq)

.PHONY: install uninstall
install: $(BIN) $(AGENT)
	install -d $(BINDIR) $(AGENTDIR) $(DATADIR)/lua/lib $(DATADIR)/queries $(MANDIR) \
	  $(BASHCOMPDIR) $(ZSHCOMPDIR)
	install -m 755 $(BIN) $(BINDIR)/heapsh
	install -m 644 $(AGENT) $(AGENTDIR)/$(AGENT)
	$(if $(LUA_FILES),install -m 644 $(LUA_FILES) $(DATADIR)/lua)
	$(if $(LUA_LIB),install -m 644 $(LUA_LIB) $(DATADIR)/lua/lib)
	$(if $(QUERY_FILES),install -m 644 $(QUERY_FILES) $(DATADIR)/queries)
	install -m 644 docs/heapsh.1 $(MANDIR)/heapsh.1
	install -m 644 completions/heapsh.bash $(BASHCOMPDIR)/heapsh
	install -m 644 completions/_heapsh $(ZSHCOMPDIR)/_heapsh

uninstall:
	rm -f $(BINDIR)/heapsh $(MANDIR)/heapsh.1 $(BASHCOMPDIR)/heapsh $(ZSHCOMPDIR)/_heapsh
	rm -rf $(AGENTDIR) $(DATADIR)
