struct lift {
	struct pol_lifted *out;
	int n;
	bool overflow;          /* more events than POL_MAX_LIFTED: the exec is refused */
	const char *cwd;
	const char *workspace;  /* as the policy names it, or NULL */
	char ws[PATH_MAX];      /* the workspace, canonical ("" when unknown), once asked */
	bool ws_done;
	int depth;              /* alias expansion and nested programs */
};
