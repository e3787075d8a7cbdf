/* SPDX-License-Identifier: MIT */
/*
 * args.h - one way to read a command line: a table of long options read by
 * getopt_long(), every number checked strictly (digits only, within its
 * range), every mistake reported in one line that names the option and
 * what it needs, with exit status 2. Header-only, C11.
 *
 * The lab's programs share it (the demo's and the tools'): it lives in
 * internal/, the project's own headers that are never installed, which the
 * top-level meson.build puts on their include path (lab_common_inc), so
 * that neither demo/ nor tools/ reaches into the other.
 *
 *	static struct { uint32_t conns; bool quiet; const char *trace; } o;
 *	const struct args_opt opts[] = {
 *		ARGS_NUM("conns", &o.conns, 0, 10000000),
 *		ARGS_FLAG("quiet", &o.quiet),
 *		ARGS_STR("trace", &o.trace),
 *		ARGS_END,
 *	};
 *	args_parse("idle-load", argc, argv, opts, usage);
 *
 * What it says (and exits 2):
 *	idle-load: --conns needs a whole number from 0 to 10000000, not 'abc'
 *	idle-load: --conns needs a value: a whole number from 0 to 10000000
 *	idle-load: --quiet takes no value
 *	idle-load: unknown option '--bogus' (idle-load --help lists them)
 *	idle-load: unexpected argument 'x' (idle-load --help lists the options)
 * --help calls usage(stdout, prog) and exits 0.
 */
#ifndef TWHEEL_ARGS_H
#define TWHEEL_ARGS_H

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

enum args_kind { ARGS_K_END, ARGS_K_FLAG, ARGS_K_NUM, ARGS_K_STR };

struct args_opt {
	const char *name;    /* the long name, without "--" */
	enum args_kind kind;
	void *dst;           /* bool; an unsigned integer of @size bytes; const char * */
	size_t size;
	uint64_t lo, hi;     /* ARGS_K_NUM: the values allowed */
};

/* A whole number in [lo, hi] into *p, an unsigned integer of 1, 2, 4 or 8 bytes. */
#define ARGS_NUM(name, p, lo, hi) { (name), ARGS_K_NUM, (p), sizeof(*(p)), (lo), (hi) }
/* No value; sets the bool *p. */
#define ARGS_FLAG(name, p) { (name), ARGS_K_FLAG, (p), sizeof(*(p)), 0, 0 }
/* Any text; *p (a const char *) points into argv. */
#define ARGS_STR(name, p) { (name), ARGS_K_STR, (p), sizeof(*(p)), 0, 0 }
#define ARGS_END { NULL, ARGS_K_END, NULL, 0, 0, 0 }

#define ARGS_MAX 48

/* Prints "prog: " and the message to stderr, then exits 2. */
__attribute__((format(printf, 2, 3), noreturn))
static inline void args_fail(const char *prog, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", prog);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/*
 * Parse @s as a decimal whole number in [@lo, @hi] into *@out: digits only
 * (no sign, no space, nothing after them). Returns 0, or -EINVAL.
 */
static inline int args_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

/* What a number option needs, for the messages: "a whole number from 1 to 9". */
static inline const char *args__need(const struct args_opt *o, char *buf, size_t len)
{
	if (o->lo == 0 && o->hi == UINT64_MAX)
		snprintf(buf, len, "a whole number");
	else
		snprintf(buf, len, "a whole number from %" PRIu64 " to %" PRIu64, o->lo, o->hi);
	return buf;
}

static inline void args__store(const struct args_opt *o, const char *prog, const char *arg)
{
	char need[80];
	uint64_t v;
	switch (o->kind) {
	case ARGS_K_FLAG:
		*(bool *)o->dst = true;
		return;
	case ARGS_K_STR:
		if (arg[0] == '-' && arg[1] == '-') /* "--trace --quiet": the value is missing */
			args_fail(prog, "--%s needs a value, not the option '%s'", o->name, arg);
		*(const char **)o->dst = arg;
		return;
	case ARGS_K_NUM:
		if (args_parse_u64(arg, o->lo, o->hi, &v) != 0)
			args_fail(prog, "--%s needs %s, not '%s'", o->name, args__need(o, need, sizeof(need)), arg);
		switch (o->size) {
		case 1: *(uint8_t *)o->dst = (uint8_t)v; return;
		case 2: *(uint16_t *)o->dst = (uint16_t)v; return;
		case 4: *(uint32_t *)o->dst = (uint32_t)v; return;
		case 8: *(uint64_t *)o->dst = v; return;
		}
		break;
	case ARGS_K_END:
		break;
	}
	args_fail(prog, "internal error: option --%s has no place to go", o->name);
}

/*
 * Read @argv against @opts (ending with ARGS_END) and store every value; on
 * any mistake print one line and exit 2; on --help call @usage(stdout,
 * @prog) and exit 0. Arguments that are not options are mistakes too.
 */
static inline void args_parse(const char *prog, int argc, char **argv, const struct args_opt *opts,
			      void (*usage)(FILE *f, const char *prog))
{
	struct option lo[ARGS_MAX + 2];
	int n = 0;
	for (; opts[n].kind != ARGS_K_END; n++) {
		if (n == ARGS_MAX)
			args_fail(prog, "internal error: more than %d options", ARGS_MAX);
		lo[n] = (struct option){ opts[n].name, opts[n].kind == ARGS_K_FLAG ? no_argument : required_argument,
					 NULL, 256 + n };
	}
	lo[n] = (struct option){ "help", no_argument, NULL, 'h' };
	lo[n + 1] = (struct option){ NULL, 0, NULL, 0 };

	opterr = 0; /* the messages are ours */
	optind = 1;
	int ch;
	char need[80];
	/* ":" first: a missing value is ':', not '?' */
	while ((ch = getopt_long(argc, argv, ":", lo, NULL)) != -1) {
		if (ch == 'h') {
			usage(stdout, prog);
			exit(0);
		}
		if (ch >= 256 && ch < 256 + n) {
			args__store(&opts[ch - 256], prog, optarg);
			continue;
		}
		const struct args_opt *o = optopt >= 256 && optopt < 256 + n ? &opts[optopt - 256] : NULL;
		if (ch == ':' && o && o->kind == ARGS_K_NUM)
			args_fail(prog, "--%s needs a value: %s", o->name, args__need(o, need, sizeof(need)));
		if (ch == ':' && o)
			args_fail(prog, "--%s needs a value", o->name);
		if (o) /* '?' for a known option: a value given to a flag */
			args_fail(prog, "--%s takes no value", o->name);
		if (optopt == 'h')
			args_fail(prog, "--help takes no value");
		if (optopt > 0 && optopt < 256)
			args_fail(prog, "unknown option '-%c' (%s --help lists them)", optopt, prog);
		args_fail(prog, "unknown option '%s' (%s --help lists them)", argv[optind - 1], prog);
	}
	if (optind < argc)
		args_fail(prog, "unexpected argument '%s' (%s --help lists the options)", argv[optind], prog);
}

#endif /* TWHEEL_ARGS_H */
