//go:build linux

package main

import "syscall"

// fsType names the file system that holds dir: the history cost depends
// on it (how a large ledger's shadow is fsynced, whether leases and the
// atomic exchange of names are there; see docs/performance.md).
func fsType(dir string) string {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return ""
	}
	switch uint32(st.Type) {
	case 0xEF53:
		return "ext4"
	case 0x58465342:
		return "xfs"
	case 0x9123683E:
		return "btrfs"
	case 0x01021994:
		return "tmpfs"
	case 0x794C7630:
		return "overlayfs"
	case 0x2FC12FC1:
		return "zfs"
	}
	return ""
}
