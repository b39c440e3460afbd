/*
 * trim(): glibc's malloc_trim(0), for Node (libs/shared/malloc-trim.ts loads it; scripts/build.mjs
 * compiles it with the system's C compiler). glibc returns freed memory to the system only from
 * the top of its main heap; a burst's freed blocks below a live one stay resident until
 * malloc_trim walks the free lists and gives their whole pages back
 * (bench/results/rss-after-load.md). Returns 1 when memory was released, 0 when none was, -1
 * without glibc.
 *
 * Node-API is ABI-stable, so its few declarations are written here rather than taken from a
 * Node's headers (none are needed to build this).
 */
#include <stddef.h>
#include <stdlib.h> /* defines __GLIBC__ on glibc */
#ifdef __GLIBC__
#include <malloc.h>
#endif

typedef struct napi_env__ *napi_env;
typedef struct napi_value__ *napi_value;
typedef struct napi_callback_info__ *napi_callback_info;
typedef int napi_status;
typedef napi_value (*napi_callback)(napi_env, napi_callback_info);
extern napi_status napi_create_int32(napi_env, int, napi_value *);
extern napi_status napi_create_function(napi_env, const char *, size_t, napi_callback, void *, napi_value *);
extern napi_status napi_set_named_property(napi_env, napi_value, const char *, napi_value);

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
#ifdef __GLIBC__
  int released = malloc_trim(0);
#else
  int released = -1;
#endif
  napi_value out;
  napi_create_int32(env, released, &out);
  return out;
}

__attribute__((visibility("default"))) napi_value napi_register_module_v1(napi_env env, napi_value exports) {
  napi_value fn;
  if (napi_create_function(env, "trim", 4, trim, NULL, &fn) == 0) napi_set_named_property(env, exports, "trim", fn);
  return exports;
}

__attribute__((visibility("default"))) int node_api_module_get_api_version_v1(void) { return 1; }
