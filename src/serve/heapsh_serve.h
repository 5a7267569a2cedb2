/*
 * heapsh_serve.h - heapsh --serve, the exporter (docs/fleet.md), for the
 * program that starts it: src/shell/main.c hands it the command line from
 * "--serve" on. It is a front end of its own on the session library; it
 * calls nothing of the shell.
 */
#ifndef HS_HEAPSH_SERVE_H
#define HS_HEAPSH_SERVE_H

/*
 * srv_main: run the exporter with argv[0] "--serve", argv[1] [ADDR:]PORT
 * and its options after (srv_main's usage text, heapsh --serve --help),
 * until SIGTERM or SIGINT; then it stops serving, detaches from every JVM
 * and returns 0. Returns 2, with a message on standard error, for options
 * it cannot use or an address it cannot listen on. It blocks SIGTERM and
 * SIGINT in the calling thread (its threads inherit that) and ignores
 * SIGPIPE.
 */
int srv_main(int argc, char **argv);

#endif
