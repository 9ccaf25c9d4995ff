/* Four Lua interpreters on four threads, each running the same script with the
 * same arguments: under `cstrace synth --timestamps` each guest thread is a CPU,
 * so the trace is a per-CPU recording that perf and cstrace merge in time order.
 * usage: luamt SCRIPT [ARGS...]   (the script sees arg[0] = SCRIPT, arg[1..]) */
#include <pthread.h>
#include <stdio.h>

#include "lauxlib.h"
#include "lua.h"
#include "lualib.h"

#define NTHREADS 4

static int script_argc;
static char **script_argv;

static void *interpret(void *unused)
{
	lua_State *L = luaL_newstate();

	if (!L)
		return NULL;
	luaL_openlibs(L);
	lua_createtable(L, script_argc, 0);
	for (int i = 1; i < script_argc; i++) {
		lua_pushstring(L, script_argv[i]);
		lua_rawseti(L, -2, i - 1);
	}
	lua_setglobal(L, "arg");
	if (luaL_dofile(L, script_argv[1]))
		fprintf(stderr, "luamt: %s\n", lua_tostring(L, -1));
	lua_close(L);
	return unused;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS - 1];
	int n = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: luamt SCRIPT [ARGS...]\n");
		return 2;
	}
	script_argc = argc;
	script_argv = argv;
	while (n < NTHREADS - 1 && pthread_create(&t[n], NULL, interpret, NULL) == 0)
		n++;
	interpret(NULL);
	while (n-- > 0)
		pthread_join(t[n], NULL);
	return 0;
}
