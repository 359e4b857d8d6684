#ifndef MOCKCHAT_BUILD_INFO_H
#define MOCKCHAT_BUILD_INFO_H

/// The commit this binary was built from, as Package.swift found it at build time
/// ("unknown" when the source had no git metadata, as in a source tarball).
const char *mockchat_build_commit(void);

#endif
