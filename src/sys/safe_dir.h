// The one rule for a directory gpuenv may keep or write files in without
// another user steering them: the store's directory and cache root, the
// files `labels`, `report --svg` and `init` write, sshd's run and host-key
// directories (docs/security.md, "Files gpuenv writes"). A directory that
// someone else owns or may write to lets them plant a symbolic link that
// root would then follow.
#pragma once

#include <string>

namespace gpuenv::sys {

/// Whether a directory writable by others passes when it has the sticky bit
/// (/tmp): the kernel then keeps others from renaming or removing what this
/// user made there, and the owner check below refuses what they made. sshd's
/// StrictModes refuses such a directory above its files, so serve ssh asks
/// for kRefused.
enum class Sticky { kTrusted, kRefused };

/// Why this user should not keep files in `dir` (relative paths start at the
/// working directory). Walks every component from "/" down without following
/// a link unchecked, and refuses: a symbolic link owned by another user than
/// this one or root (the kernel's fs.protected_symlinks rule, for every
/// directory); a directory owned by another user than this one or root; a
/// directory writable by group or others (unless sticky and `sticky` is
/// kTrusted); a component that is no directory. Links owned by this user or
/// root are followed and their targets walked the same way. Components that
/// do not exist yet pass (the caller creates them, in a directory that
/// passed). "" when `dir` is fine or ""; otherwise the message names the path
/// and the fix, ending with `elsewhere` (what else the user can do).
std::string unsafe_dir(const std::string& dir, Sticky sticky, const std::string& elsewhere);

}  // namespace gpuenv::sys
