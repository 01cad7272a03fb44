// SPDX-License-Identifier: GPL-2.0
/*
 * Exec hooks of the kernel floor.
 *
 * bprm_check_security judges the file being executed, as an object: the
 * exec right must cover it, and a file with no name at all (a memfd, an
 * O_TMPFILE or an unlinked file: i_nlink == 0) is fileless exec and always
 * denied, whatever the policy.  It runs once per binfmt step, so a script
 * and its interpreter are both judged.  execveat(fd, "", AT_EMPTY_PATH)
 * reaches the same hook with the same file.
 *
 * mmap_file and file_mprotect close the same door for code mapped without
 * exec: PROT_EXEC on a file needs the exec right on that file.  Anonymous
 * memory is not judged (JITs need it); what that cannot close is code an
 * agent writes into its own anonymous memory, which runs with no more
 * rights than the agent already has.
 */
#include "fs.bpf.h"

#define PROT_EXEC 0x4
#define VM_EXEC   0x4

static __always_inline bool fileless(struct file *file)
{
	return BPF_CORE_READ(file, f_inode, i_nlink) == 0;
}

static __always_inline void fileless_verdict(struct verdict *v)
{
	v->err = -EACCES;
	v->decision = CORDON_DENY;
	v->rule_id = 0;
	v->reason = CORDON_REASON_FILELESS;
}

SEC("lsm.s/bprm_check_security")
int BPF_PROG(cordon_bprm_check, struct linux_binprm *bprm, int ret)
{
	struct cordon_session *s;
	struct file *file;
	struct verdict v;
	__u64 sid = 0;

	if (ret)
		return ret;
	s = current_session(&sid);
	if (!s)
		return 0;
	file = bprm->file;
	if (fileless(file))
		fileless_verdict(&v);
	else
		decide(s->policy_id, file->f_path.dentry, file->f_path.mnt, CORDON_FS_EXEC, &v);
	report_path(sid, CORDON_OP_EXEC, &v, &file->f_path);
	return v.err;
}

SEC("lsm.s/mmap_file")
int BPF_PROG(cordon_mmap_file, struct file *file, unsigned long reqprot, unsigned long prot,
	     unsigned long flags, int ret)
{
	struct cordon_session *s;
	struct verdict v;
	__u64 sid = 0;

	if (ret)
		return ret;
	if (!file || !(prot & PROT_EXEC))
		return 0;
	s = current_session(&sid);
	if (!s)
		return 0;
	if (fileless(file))
		fileless_verdict(&v);
	else
		decide(s->policy_id, file->f_path.dentry, file->f_path.mnt, CORDON_FS_EXEC, &v);
	if (v.err)
		report_path(sid, CORDON_OP_MMAP_EXEC, &v, &file->f_path);
	return v.err;
}

SEC("lsm/file_mprotect")
int BPF_PROG(cordon_file_mprotect, struct vm_area_struct *vma, unsigned long reqprot,
	     unsigned long prot, int ret)
{
	struct cordon_session *s;
	struct file *file;
	struct verdict v;
	__u64 sid = 0;

	if (ret)
		return ret;
	if (!(prot & PROT_EXEC))
		return 0;
	file = BPF_CORE_READ(vma, vm_file);
	if (!file || (BPF_CORE_READ(vma, vm_flags) & VM_EXEC))
		return 0;
	s = current_session(&sid);
	if (!s)
		return 0;
	if (fileless(file))
		fileless_verdict(&v);
	else
		decide(s->policy_id, BPF_CORE_READ(file, f_path.dentry), BPF_CORE_READ(file, f_path.mnt),
		       CORDON_FS_EXEC, &v);
	if (v.err)
		report_walk(sid, CORDON_OP_MPROTECT_EXEC, &v, BPF_CORE_READ(file, f_path.dentry),
			    BPF_CORE_READ(file, f_path.mnt));
	return v.err;
}
