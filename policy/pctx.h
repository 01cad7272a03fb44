struct pctx {
	const char *file;
	struct pol_diags *diags;
	struct jpos_map *pos;
	const struct pol_vars *vars;
	json_t *lists;
	struct policy *p;
	struct pol_canon_memo canon;    /* resolved directories, this load only */
};
typedef int (*item_fn)(struct pctx *c, json_t *item, const char *ptr, void *ctx);
