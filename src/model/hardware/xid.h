// Xid errors (the NVIDIA driver's error codes, docs.nvidia.com/deploy/xid-errors):
// each code's short description, the one home. The texts are dcgm-exporter's
// err_msg label values (its xidErrCodeToText, internal/pkg/collector/
// xid_errors.go in NVIDIA/dcgm-exporter at 3446595), so that a query on
// DCGM_FI_DEV_XID_ERRORS{err_msg="..."} matches gpuenv's series too.
#pragma once

#include <cstdint>

namespace gpuenv {

/// The description of Xid `code` ("GPU has fallen off the bus" for 79);
/// "Unknown Error", as dcgm-exporter, for a code past the table.
const char* xid_description(std::uint64_t code);

}  // namespace gpuenv
