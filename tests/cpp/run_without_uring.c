/* SPDX-License-Identifier: MIT */
/*
 * run_without_uring [--expect STATUS] PROGRAM [ARGS...] - run PROGRAM where
 * io_uring is refused, as a container's seccomp profile refuses it
 * (io_uring_setup fails with EPERM), and pass if it exits with STATUS (77,
 * skipped, unless told otherwise): not on a signal, not with
 * std::terminate. Exits 0 if so, 1 if not, 77 where no seccomp filter can
 * be installed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NO_FILTER 99

static int refuse_io_uring(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
	int status, expect = 77;
	pid_t pid;

	if (argc > 2 && strcmp(argv[1], "--expect") == 0) {
		expect = atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: run_without_uring [--expect STATUS] PROGRAM [ARGS...]\n");
		return 1;
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		if (refuse_io_uring())
			_exit(NO_FILTER);
		execv(argv[1], argv + 1);
		perror(argv[1]);
		_exit(1);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == NO_FILTER) {
		printf("cannot install a seccomp filter here\n");
		return 77;
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == expect)
		return 0;
	if (WIFSIGNALED(status))
		printf("%s: killed by signal %d (%s)\n", argv[1], WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		printf("%s: exit status %d, not %d\n", argv[1], WEXITSTATUS(status), expect);
	return 1;
}
