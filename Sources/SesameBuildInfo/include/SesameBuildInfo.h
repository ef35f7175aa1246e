#ifndef SESAME_BUILD_INFO_H
#define SESAME_BUILD_INFO_H

/// The git commit this binary was built from, as set by scripts/release and scripts/test through the SESAME_COMMIT
/// environment variable when the package manifest is evaluated (Package.swift checks it is a hexadecimal commit id,
/// optionally followed by "-dirty"). NULL for a plain `swift build`: the commit is then unknown, and says so.
const char *_Nullable sesame_build_commit(void);

#endif
