// SPDX-License-Identifier: MIT
/*
 * fake_nvperf.c - stand-ins for the profiler's libraries next to the fake CUPTI
 * (tests/fake_cupti/libnvperf_host.so, libnvperf_target.so): only their names matter. The shim
 * loads them by path before the profiler initializes (shim/pm.c, preload_nvperf), and the fake
 * profiler checks that they are loaded by then (fake_pm.c).
 */
int fake_nvperf_present(void);

int fake_nvperf_present(void)
{
	return 1;
}
