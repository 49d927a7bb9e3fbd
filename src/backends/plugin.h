/* Loading plugins (include/tbench/plugin.h) and shared objects.
 *
 * A plugin is a shared object built against the public ABI; the adapter
 * in plugin.c makes each loaded one a tb_backend (one set of slot
 * functions for all, the plugin record as `data`) and registers it, so
 * the registry lists it after the built-in backends and the harness runs
 * it like any other.  A plugin that cannot be used (not loadable, no entry point,
 * another ABI version, a malformed table) is still registered, as a
 * backend whose probe fails with that reason: `list` shows it and its
 * cases are `unavailable`.  So is one whose trial load crashed, hung or
 * exited: each plugin is first loaded in a child process that runs its
 * constructors, entry point, probe and axes (10 s at most), and only a
 * plugin that came through is loaded into this process.  A file anyone
 * could change (writable by every user, or in a folder writable by every
 * user without the sticky bit) is unavailable and never opened.
 *
 * Plugins are loaded by the CLI before anything else runs (before the
 * workers fork) and stay loaded until exit. */
#ifndef TB_BACKENDS_PLUGIN_H
#define TB_BACKENDS_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>

#include "backend.h"

/* Most plugins one process holds (--plugin and TBENCH_PLUGIN_PATH). */
#define TB_MAX_PLUGINS TB_MAX_REGISTERED

/* dlopen path (RTLD_NOW | RTLD_LOCAL) and dlsym sym.  On success 0 with
 * *handle and *fn set.  Otherwise TB_EUNAVAILABLE with dlopen's message,
 * or "PATH: no SYM" for a missing symbol, appended to why (after "; "
 * when why is not empty).  The one loader of the CUDA module and of
 * plugins. */
int tb_dl_entry(const char *path, const char *sym, void **handle,
                void **fn, char *why, size_t len);

/* Load and register the plugin named by spec: "PATH" or "PATH:LABEL"
 * (LABEL: 1-31 of [A-Za-z0-9_-], then the plugin's backend name).  A
 * plugin that cannot be used is registered unavailable.  Returns 0, or
 * TB_EINVAL with one line in err when spec is malformed, its PATH does
 * not exist (or cannot be looked at), the limit is
 * reached or the backend name is taken (by a built-in backend or an
 * earlier plugin: give one a label). */
int tb_plugin_add(const char *spec, char *err, size_t len);

/* Every entry of a ':'-separated list (TBENCH_PLUGIN_PATH): a file is
 * loaded as by tb_plugin_add (no label); a directory contributes its
 * *.so files in name order.  Empty entries are skipped.  Returns 0 or
 * the first error of tb_plugin_add (or TB_EINVAL for an entry that
 * does not exist, is relative, or is a folder writable by every user),
 * with err "TBENCH_PLUGIN_PATH: ...". */
int tb_plugin_add_path(const char *list, char *err, size_t len);

/* Registered plugins, in load order. */
int tb_plugin_count(void);
const tb_backend *tb_plugin_backend(int i);
/* The file a plugin backend came from, and its version string (NULL
 * when it has none or was not loaded); NULL path if b is no plugin. */
const char *tb_plugin_path(const tb_backend *b);
/* Why plugin backend b is never asked for bf16/f16 kernels (built for
 * ABI 1.0, before them), or NULL (b may offer them; not a plugin). */
const char *tb_plugin_half_reason(const tb_backend *b);
const char *tb_plugin_version(const tb_backend *b);
/* Did b's shared object load with a valid table?  (Its probe may still
 * fail.)  false for a backend that is no plugin. */
bool tb_plugin_loaded(const tb_backend *b);

#endif
