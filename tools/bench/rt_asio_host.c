/* SPDX-License-Identifier: MIT */
/* tools/bench/rt_asio_host.c - the Asio adapter's tables (rt_host.h) over rt_asio.cpp's host. */
#include <stdio.h>
#include <stdlib.h>

#include "rt_host.h"

struct twheel_host *rt_asio_host_open(void);
void rt_asio_host_pump(void);
void rt_asio_host_run(void);
void rt_asio_host_stop(void);
void rt_asio_host_close(struct twheel_host *h);

static struct twheel_host *host_open(void) { return rt_asio_host_open(); }
static void host_pump(void) { rt_asio_host_pump(); }
static void host_run(void) { rt_asio_host_run(); }
static void host_stop(void) { rt_asio_host_stop(); }
static void host_close(struct twheel_host *h) { rt_asio_host_close(h); }

RT_HOST_TABLES(rt_twheel_asio, "twheel-asio");
