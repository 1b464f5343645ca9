/*
 * binding.c - which GPU, cores and NUMA node each rank uses (the one module
 * that uses hwloc).
 *
 * gr_bind_rank_to_gpu() runs collectively on every rank of ctx->comm before
 * any CUDA context exists:
 *
 *   1. node-local rank: from the launcher's environment when all ranks of the
 *      node agree on it, else the rank in MPI_Comm_split_type(SHARED);
 *   2. local facts: the topology (the real machine, or GR_TOPOLOGY_XML), the
 *      GPUs (CUDA's list, or GR_FAKE_GPUS), each GPU's locality found by PCI
 *      bus id, and the launcher's CPU mask (hwloc_get_cpubind, or
 *      GR_FAKE_LAUNCHER_CPUSET with a topology file);
 *   3. one MPI_Allgather of those facts over the node, then every rank runs
 *      the same deterministic plan, so no two ranks disagree about who takes
 *      which GPU;
 *   4. this rank binds its cores and memory (or, with a topology file,
 *      reports what it would bind).
 *
 * Every collective step runs on every rank even when a local step failed:
 * failures travel inside the gathered record and ctx.c's agreement stops
 * the job afterwards.
 */
#define _GNU_SOURCE
#include "gr_env.h"
#include "gr_internal.h"

#include <hwloc.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Largest number of GPUs one process can see (the biggest nodes have 16). */
#define GR_MAX_GPUS 64
/* Key of a GPU without a PCI bus id (ORed with its CUDA ordinal); sorts last. */
#define GR_NO_BUSID_KEY (UINT64_C(1) << 63)

/* Launcher variables naming the node-local rank and size, most specific
 * launcher first: a stale SLURM_LOCALID is inherited by every rank when
 * mpirun runs inside an sbatch script, so the MPI launchers' own win. */
static const struct {
    const char *rank_var, *size_var;
} g_local_env[] = {
    {"OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"MPI_LOCALRANKID", "MPI_LOCALNRANKS"},
    {"SLURM_LOCALID", NULL},
};
#define GR_NLOCAL_ENV ((int)(sizeof(g_local_env) / sizeof(g_local_env[0])))

/* What one rank tells the others of its node. Plain integers: sent as bytes
 * within one node, where every rank runs the same binary. */
typedef struct node_rec {
    int32_t failed;         /* a local step failed: no plan on this node */
    int32_t may_share;      /* this rank may take a GPU another rank has */
    int32_t launcher_bound; /* the launcher's mask is narrower than the machine */
    int32_t ngpu;           /* GPUs this rank sees */
    int32_t local_rank;     /* as resolved on every rank alike */
    int32_t pad;
    uint64_t key[GR_MAX_GPUS];  /* PCI bus id as a sortable number, CUDA order */
    int32_t score[GR_MAX_GPUS]; /* PUs shared by the GPU's locality and the launcher mask */
} node_rec_t;

/* Local facts of this rank. */
typedef struct bind_state {
    hwloc_topology_t topo;
    const char *xml;          /* GR_TOPOLOGY_XML, NULL for the real machine */
    int fake;                 /* GPUs come from GR_FAKE_GPUS */
    int ngpu;
    gr_gpu_info_t gpus[GR_MAX_GPUS];
    uint64_t key[GR_MAX_GPUS];
    hwloc_obj_t where[GR_MAX_GPUS]; /* non-I/O ancestor of the GPU, NULL if unknown */
    hwloc_bitmap_t launcher;  /* CPUs the launcher lets this process use */
    int launcher_bound;
} bind_state_t;

/* How the plan gave a rank its GPU (for gpu_choice and the info log). */
typedef enum pick_how {
    PICK_NONE = 0,
    PICK_ONLY,      /* the only GPU this rank sees */
    PICK_ORDER,     /* local rank -> GPU in PCI bus order */
    PICK_NEAR,      /* nearest free GPU to the launcher's cores */
    PICK_FAR,       /* launcher-bound, but no free GPU near its cores */
    PICK_SHARED     /* every GPU taken: shares one */
} pick_how_t;

static const char *env_nonempty(const char *name)
{
    int id = gr_env_lookup(name);
    return id >= 0 ? gr_env((gr_env_id_t)id) : NULL; /* only registered names are read */
}

/* A decimal environment value, or -1 when absent or not a number >= 0. */
static int env_int(const char *name)
{
    const char *v = name ? env_nonempty(name) : NULL;
    if (!v)
        return -1;
    char *end = NULL;
    long x = strtol(v, &end, 10);
    return (end && *end == '\0' && x >= 0 && x < (1L << 30)) ? (int)x : -1;
}

/* "0000:07:00.0" or "07:00.0" (any case, CUDA's 8-digit domain too) into a
 * key that sorts in PCI bus order; -1 when it does not parse. */
static int parse_busid(const char *s, unsigned *dom, unsigned *bus, unsigned *dev, unsigned *fn, uint64_t *key)
{
    unsigned d = 0, b = 0, v = 0, f = 0;
    char tail = 0;
    if (sscanf(s, "%x:%x:%x.%x%c", &d, &b, &v, &f, &tail) != 4) {
        d = 0;
        if (sscanf(s, "%x:%x.%x%c", &b, &v, &f, &tail) != 3)
            return -1;
    }
    if (d > 0xffff || b > 0xff || v > 0x1f || f > 0x7)
        return -1;
    *dom = d, *bus = b, *dev = v, *fn = f;
    *key = ((uint64_t)d << 32) | ((uint64_t)b << 16) | ((uint64_t)v << 8) | f;
    return 0;
}

static void key_to_busid(uint64_t key, char *buf, size_t len)
{
    snprintf(buf, len, "%04x:%02x:%02x.%x", (unsigned)(key >> 32), (unsigned)((key >> 16) & 0xff),
             (unsigned)((key >> 8) & 0xff), (unsigned)(key & 0xff));
}

static void list_str(hwloc_const_bitmap_t set, char *buf, size_t len)
{
    if (hwloc_bitmap_list_snprintf(buf, len, set) < 0)
        snprintf(buf, len, "?");
}

/* --------------------------------------------------------------------------
 * 1. Node-local rank.
 * ------------------------------------------------------------------------ */

/* Every rank of the node learns which launcher variable (if any) names a
 * consistent local rank: present on every rank, and together a permutation
 * of 0..n-1 matching the node's size. Collective over node. */
static gr_result_t resolve_local_rank(MPI_Comm node, int node_rank, int node_size, int *local_rank,
                                      const char **source)
{
    int mine[2 * GR_NLOCAL_ENV];
    for (int s = 0; s < GR_NLOCAL_ENV; ++s) {
        mine[2 * s] = env_int(g_local_env[s].rank_var);
        mine[2 * s + 1] = env_int(g_local_env[s].size_var);
    }
    int *all = (int *)malloc(sizeof(mine) * (size_t)node_size);
    char *seen = (char *)malloc((size_t)node_size);
    int rc = all ? MPI_Allgather(mine, 2 * GR_NLOCAL_ENV, MPI_INT, all, 2 * GR_NLOCAL_ENV, MPI_INT, node)
                 : MPI_ERR_NO_MEM;
    *local_rank = node_rank;
    *source = "MPI_Comm_split_type";
    if (rc != MPI_SUCCESS || !seen) {
        free(all);
        free(seen);
        if (rc == MPI_ERR_NO_MEM || !seen)
            GR_FAIL(GR_ERR_NOMEM, "cannot allocate %d node records for the local rank", node_size);
        GR_FAIL(GR_ERR_MPI, "MPI_Allgather of local ranks over the node failed; check the MPI installation");
    }
    for (int s = 0; s < GR_NLOCAL_ENV; ++s) {
        int ok = 1;
        memset(seen, 0, (size_t)node_size);
        for (int i = 0; i < node_size && ok; ++i) {
            int lr = all[i * 2 * GR_NLOCAL_ENV + 2 * s], ls = all[i * 2 * GR_NLOCAL_ENV + 2 * s + 1];
            if (lr < 0 || lr >= node_size || seen[lr] || (ls >= 0 && ls != node_size))
                ok = 0;
            else
                seen[lr] = 1;
        }
        if (ok) {
            *local_rank = mine[2 * s];
            *source = g_local_env[s].rank_var;
            break;
        }
        if (mine[2 * s] >= 0)
            GR_INFO(GR_SUB_BIND, "%s=%d is set but not consistent over the %d rank(s) of this node; not using it",
                    g_local_env[s].rank_var, mine[2 * s], node_size);
    }
    free(all);
    free(seen);
    return GR_SUCCESS;
}

/* --------------------------------------------------------------------------
 * 2. Local facts.
 * ------------------------------------------------------------------------ */

static gr_result_t load_topology(bind_state_t *st)
{
    if (hwloc_topology_init(&st->topo) != 0) {
        st->topo = NULL;
        GR_FAIL(GR_ERR_TOPOLOGY, "hwloc_topology_init failed (%s)", strerror(errno));
    }
    if (st->xml) {
        if (access(st->xml, R_OK) != 0)
            GR_FAIL(GR_ERR_TOPOLOGY, "GR_TOPOLOGY_XML=%s cannot be read on host %s (%s); give the path of an "
                    "hwloc XML file (lstopo FILE.xml), or unset GR_TOPOLOGY_XML", st->xml, gr_log_host(),
                    strerror(errno));
        if (hwloc_topology_set_xml(st->topo, st->xml) != 0)
            GR_FAIL(GR_ERR_TOPOLOGY, "GR_TOPOLOGY_XML=%s is not an hwloc XML topology (%s); write one with "
                    "lstopo FILE.xml and check it with lstopo --if xml -i FILE.xml", st->xml, strerror(errno));
        /* a topology file is small: keep every PCI object it has */
        hwloc_topology_set_io_types_filter(st->topo, HWLOC_TYPE_FILTER_KEEP_ALL);
    } else {
        /* GPUs are "important" PCI devices (display class), so they stay */
        hwloc_topology_set_io_types_filter(st->topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    }
    if (hwloc_topology_load(st->topo) != 0) {
        if (st->xml)
            GR_FAIL(GR_ERR_TOPOLOGY, "GR_TOPOLOGY_XML=%s could not be loaded by hwloc (%s); check it with "
                    "lstopo --if xml -i FILE.xml", st->xml, strerror(errno));
        GR_FAIL(GR_ERR_TOPOLOGY, "hwloc could not discover the topology of host %s (%s); try --bind none",
                gr_log_host(), strerror(errno));
    }
    GR_INFO(GR_SUB_BIND, "topology: %s", st->xml ? st->xml : "this machine (hwloc)");
    return GR_SUCCESS;
}

/* GR_FAKE_GPUS: comma-separated PCI bus ids, in CUDA order. */
static gr_result_t list_fake_gpus(bind_state_t *st, const char *list)
{
    char buf[4096];
    if (strlen(list) >= sizeof(buf))
        GR_FAIL(GR_ERR_INVALID_ARG, "GR_FAKE_GPUS is longer than %zu characters", sizeof(buf) - 1);
    snprintf(buf, sizeof(buf), "%s", list);
    st->ngpu = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        unsigned d, b, v, f;
        uint64_t key;
        if (st->ngpu == GR_MAX_GPUS)
            GR_FAIL(GR_ERR_INVALID_ARG, "GR_FAKE_GPUS lists more than %d GPUs", GR_MAX_GPUS);
        if (parse_busid(tok, &d, &b, &v, &f, &key) != 0)
            GR_FAIL(GR_ERR_INVALID_ARG, "GR_FAKE_GPUS: '%s' is not a PCI bus id; write them like "
                    "0000:07:00.0,0000:0f:00.0 in CUDA order", tok);
        for (int i = 0; i < st->ngpu; ++i)
            if (st->key[i] == key)
                GR_FAIL(GR_ERR_INVALID_ARG, "GR_FAKE_GPUS lists %s twice; each GPU once, in CUDA order", tok);
        gr_gpu_info_t *g = &st->gpus[st->ngpu];
        memset(g, 0, sizeof(*g));
        key_to_busid(key, g->pci_bus_id, sizeof(g->pci_bus_id));
        st->key[st->ngpu++] = key;
    }
    return GR_SUCCESS;
}

static gr_result_t list_gpus(bind_state_t *st, int want_gpu)
{
    const char *fake = env_nonempty("GR_FAKE_GPUS");
    if (fake) {
        st->fake = 1;
        GR_CHECK(list_fake_gpus(st, fake));
    } else {
        gr_gpu_info_t tmp[GR_MAX_GPUS + 1];
        int n = gr_cuda_list_gpus(tmp, GR_MAX_GPUS + 1);
        if (n > GR_MAX_GPUS) {
            GR_WARN(GR_SUB_BIND, "more than %d GPUs visible; placing ranks on the first %d", GR_MAX_GPUS,
                    GR_MAX_GPUS);
            n = GR_MAX_GPUS;
        }
        st->ngpu = 0;
        for (int i = 0; i < (n > 0 ? n : 0); ++i) {
            unsigned d, b, v, f;
            st->gpus[i] = tmp[i];
            if (parse_busid(tmp[i].pci_bus_id, &d, &b, &v, &f, &st->key[i]) == 0) {
                /* one spelling everywhere: 0000:07:00.0 */
                key_to_busid(st->key[i], st->gpus[i].pci_bus_id, sizeof(st->gpus[i].pci_bus_id));
            } else {
                /* no bus id: the GPU is known only by its CUDA ordinal, after
                 * every real bus id, and its locality stays unknown */
                GR_WARN(GR_SUB_BIND, "CUDA device %d has no usable PCI bus id ('%s'); it is placed by its "
                        "CUDA ordinal and not bound to its cores", i, tmp[i].pci_bus_id);
                st->key[i] = GR_NO_BUSID_KEY | (uint64_t)i;
            }
            st->ngpu = i + 1;
        }
    }
    GR_INFO(GR_SUB_BIND, "%d GPU(s) %s", st->ngpu, st->fake ? "from GR_FAKE_GPUS" : "visible to CUDA");
    if (want_gpu && st->ngpu == 0) {
        const char *cvd = gr_env(GR_ENV_CUDA_VISIBLE_DEVICES);
        GR_FAIL(GR_ERR_NO_GPU, "no CUDA GPU is visible to this rank on host %s (CUDA_VISIBLE_DEVICES=%s); "
                "check the job's GPU request or use --backend cpu", gr_log_host(), cvd ? cvd : "unset");
    }
    return GR_SUCCESS;
}

/* Each GPU's locality: PCI bus id -> hwloc PCI device -> first ancestor with
 * CPUs (a Package, a NUMA-level Group, the Machine). */
static gr_result_t locate_gpus(bind_state_t *st)
{
    for (int i = 0; i < st->ngpu; ++i) {
        uint64_t k = st->key[i];
        st->where[i] = NULL;
        if (k & GR_NO_BUSID_KEY)
            continue;
        hwloc_obj_t pci = hwloc_get_pcidev_by_busid(st->topo, (unsigned)(k >> 32), (unsigned)((k >> 16) & 0xff),
                                                    (unsigned)((k >> 8) & 0xff), (unsigned)(k & 0xff));
        st->where[i] = pci ? hwloc_get_non_io_ancestor_obj(st->topo, pci) : NULL;
        if (!st->where[i]) {
            if (st->fake)
                GR_FAIL(GR_ERR_TOPOLOGY, "GR_FAKE_GPUS: PCI device %s is not in the topology of %s; list bus ids "
                        "that the topology has (lstopo%s%s shows them)", st->gpus[i].pci_bus_id,
                        st->xml ? st->xml : "this machine", st->xml ? " --if xml -i " : "", st->xml ? st->xml : "");
            GR_WARN(GR_SUB_BIND, "GPU %d (%s) is not in hwloc's topology of host %s; its cores and NUMA node "
                    "are unknown, so it is not bound to them", i, st->gpus[i].pci_bus_id, gr_log_host());
            continue;
        }
        if (st->fake) {
            const char *model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
            if (model)
                snprintf(st->gpus[i].name, sizeof(st->gpus[i].name), "%s (fake)", model);
            else
                snprintf(st->gpus[i].name, sizeof(st->gpus[i].name), "PCI %04x:%04x (fake)",
                         pci->attr->pcidev.vendor_id, pci->attr->pcidev.device_id);
        }
        if (gr_log_enabled(GR_LOG_INFO, GR_SUB_BIND)) {
            char cs[256], ns[64];
            list_str(st->where[i]->cpuset, cs, sizeof(cs));
            list_str(st->where[i]->nodeset, ns, sizeof(ns));
            GR_INFO(GR_SUB_BIND, "GPU %d %s: local to %s L#%u, cores %s, NUMA %s", i, st->gpus[i].pci_bus_id,
                    hwloc_obj_type_string(st->where[i]->type), st->where[i]->logical_index, cs, ns);
        }
    }
    return GR_SUCCESS;
}

/* GR_FAKE_LAUNCHER_CPUSET: one hwloc list for every rank, or one per local
 * rank separated by '/': "0-3,16-19" or "8/0/9/1". */
static gr_result_t fake_launcher_mask(bind_state_t *st, const char *spec, int local_rank)
{
    char buf[4096];
    if (strlen(spec) >= sizeof(buf))
        GR_FAIL(GR_ERR_INVALID_ARG, "GR_FAKE_LAUNCHER_CPUSET is longer than %zu characters", sizeof(buf) - 1);
    snprintf(buf, sizeof(buf), "%s", spec);
    int n = 1;
    for (const char *p = buf; *p; ++p)
        n += *p == '/';
    int want = n == 1 ? 0 : local_rank;
    if (want >= n)
        GR_FAIL(GR_ERR_INVALID_ARG, "GR_FAKE_LAUNCHER_CPUSET=%s has %d mask(s) but this is local rank %d; give "
                "one mask for all ranks or one per local rank, separated by '/'", spec, n, local_rank);
    char *tok = buf;
    for (int i = 0; i < want; ++i)
        tok = strchr(tok, '/') + 1;
    char *slash = strchr(tok, '/');
    if (slash)
        *slash = '\0';
    if (hwloc_bitmap_list_sscanf(st->launcher, tok) != 0)
        GR_FAIL(GR_ERR_INVALID_ARG, "GR_FAKE_LAUNCHER_CPUSET: '%s' is not a CPU list like 0-3,16-19", tok);
    hwloc_bitmap_and(st->launcher, st->launcher, hwloc_topology_get_topology_cpuset(st->topo));
    if (hwloc_bitmap_iszero(st->launcher))
        GR_FAIL(GR_ERR_INVALID_ARG, "GR_FAKE_LAUNCHER_CPUSET: '%s' names no CPU of %s", tok, st->xml);
    return GR_SUCCESS;
}

static gr_result_t launcher_mask(bind_state_t *st, int local_rank)
{
    hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(st->topo);
    const char *fake = env_nonempty("GR_FAKE_LAUNCHER_CPUSET");
    if (st->xml && fake) {
        GR_CHECK(fake_launcher_mask(st, fake, local_rank));
    } else {
        if (fake)
            GR_WARN(GR_SUB_BIND, "GR_FAKE_LAUNCHER_CPUSET is ignored without GR_TOPOLOGY_XML; "
                    "the real CPU mask of this process is used");
        if (st->xml || hwloc_get_cpubind(st->topo, st->launcher, HWLOC_CPUBIND_PROCESS) != 0
            || hwloc_bitmap_iszero(st->launcher))
            hwloc_bitmap_copy(st->launcher, all);
        hwloc_bitmap_and(st->launcher, st->launcher, all);
        if (hwloc_bitmap_iszero(st->launcher))
            hwloc_bitmap_copy(st->launcher, all);
    }
    st->launcher_bound = !hwloc_bitmap_isincluded(all, st->launcher);
    char cs[512];
    list_str(st->launcher, cs, sizeof(cs));
    GR_INFO(GR_SUB_BIND, "launcher CPU mask %s%s (%s)", cs, st->xml && fake ? " from GR_FAKE_LAUNCHER_CPUSET" : "",
            st->launcher_bound ? "narrower than the machine: the launcher bound this rank" : "the whole machine");
    return GR_SUCCESS;
}

/* --------------------------------------------------------------------------
 * 3. The plan: the same on every rank of the node.
 * ------------------------------------------------------------------------ */

typedef struct rank_order {
    int idx, ngpu, nnear, local_rank;
} rank_order_t;

static int cmp_rank_order(const void *a, const void *b)
{
    const rank_order_t *x = (const rank_order_t *)a, *y = (const rank_order_t *)b;
    if (x->ngpu != y->ngpu)
        return x->ngpu < y->ngpu ? -1 : 1;
    if (x->nnear != y->nnear)
        return x->nnear < y->nnear ? -1 : 1;
    return x->local_rank < y->local_rank ? -1 : (x->local_rank > y->local_rank);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : (x > y);
}

typedef struct plan {
    int *pick;            /* per node rank: index into its own GPU list, -1 none */
    pick_how_t *how;
    int *users;           /* per distinct GPU, parallel to keys */
    uint64_t *keys;       /* distinct GPUs of the node, PCI order */
    int nkeys;
    int unplaced;         /* ranks with GPUs that got none */
    int first_unplaced;   /* lowest local rank among them */
} plan_t;

static int key_index(const plan_t *p, uint64_t key)
{
    const uint64_t *hit = (const uint64_t *)bsearch(&key, p->keys, (size_t)p->nkeys, sizeof(uint64_t), cmp_u64);
    return hit ? (int)(hit - p->keys) : -1;
}

/*
 * Give each rank a GPU. Ranks with the fewest choices go first (one visible
 * GPU, then launcher-bound ranks with few near GPUs), then by local rank.
 * Each takes, among the GPUs it sees, the one with the fewest ranks on it,
 * then the most PUs shared with its launcher mask, then the lowest PCI bus
 * id. A rank that may not share gets none when all its GPUs are taken.
 * Without launcher masks this is "local rank i -> i-th GPU in PCI order".
 */
static gr_result_t make_plan(const node_rec_t *recs, const int *lr, int n, plan_t *p)
{
    memset(p, 0, sizeof(*p));
    p->first_unplaced = -1;
    size_t nn = n > 0 ? (size_t)n : 1, total = 1;
    for (int i = 0; i < n; ++i)
        total += (size_t)recs[i].ngpu;
    p->pick = (int *)malloc(sizeof(int) * nn);
    p->how = (pick_how_t *)calloc(nn, sizeof(pick_how_t));
    p->keys = (uint64_t *)malloc(sizeof(uint64_t) * total);
    p->users = (int *)calloc(total, sizeof(int));
    rank_order_t *order = (rank_order_t *)malloc(sizeof(rank_order_t) * nn);
    if (!p->pick || !p->how || !p->keys || !p->users || !order) {
        free(order);
        GR_FAIL(GR_ERR_NOMEM, "cannot allocate the GPU plan for %d ranks", n);
    }
    for (int i = 0; i < n; ++i)
        for (int g = 0; g < recs[i].ngpu; ++g)
            p->keys[p->nkeys++] = recs[i].key[g];
    qsort(p->keys, (size_t)p->nkeys, sizeof(uint64_t), cmp_u64);
    int u = 0;
    for (int k = 0; k < p->nkeys; ++k)
        if (k == 0 || p->keys[k] != p->keys[u - 1])
            p->keys[u++] = p->keys[k];
    p->nkeys = u;

    for (int i = 0; i < n; ++i) {
        int nnear = 0;
        for (int g = 0; g < recs[i].ngpu; ++g)
            nnear += recs[i].score[g] > 0;
        order[i] = (rank_order_t){i, recs[i].ngpu, nnear, lr[i]};
        p->pick[i] = -1;
    }
    qsort(order, (size_t)n, sizeof(rank_order_t), cmp_rank_order);

    for (int o = 0; o < n; ++o) {
        int i = order[o].idx;
        const node_rec_t *r = &recs[i];
        int best = -1, best_users = 0, best_score = 0;
        uint64_t best_key = 0;
        for (int g = 0; g < r->ngpu; ++g) {
            int users = p->users[key_index(p, r->key[g])];
            int better = best < 0 || users < best_users
                      || (users == best_users && (r->score[g] > best_score
                          || (r->score[g] == best_score && r->key[g] < best_key)));
            if (better)
                best = g, best_users = users, best_score = r->score[g], best_key = r->key[g];
        }
        if (best < 0)
            continue; /* sees no GPU */
        if (best_users > 0 && !r->may_share) {
            p->unplaced++;
            if (p->first_unplaced < 0 || lr[i] < p->first_unplaced)
                p->first_unplaced = lr[i];
            continue;
        }
        p->users[key_index(p, best_key)]++;
        p->pick[i] = best;
        if (best_users > 0)
            p->how[i] = PICK_SHARED;
        else if (r->ngpu == 1)
            p->how[i] = PICK_ONLY;
        else if (!r->launcher_bound)
            p->how[i] = PICK_ORDER;
        else
            p->how[i] = best_score > 0 ? PICK_NEAR : PICK_FAR;
    }
    free(order);
    return GR_SUCCESS;
}

static void plan_free(plan_t *p)
{
    free(p->pick);
    free(p->how);
    free(p->users);
    free(p->keys);
}

/* --------------------------------------------------------------------------
 * 4. Binding this rank.
 * ------------------------------------------------------------------------ */

/* Bind (or, with a topology file, plan to bind) this rank's CPUs and memory.
 * Fills pl->cpuset and pl->bound; binding failures are warnings. */
static void apply_binding(gr_ctx_t ctx, bind_state_t *st, int g)
{
    gr_placement_t *pl = &ctx->placement;
    gr_bind_policy_t policy = ctx->cfg.bind;
    const char *by_launcher = st->launcher_bound ? "cpu by launcher" : "nothing";
    const char *sim = st->xml ? ", simulated (GR_TOPOLOGY_XML)" : "";
    hwloc_obj_t where = g >= 0 ? st->where[g] : NULL;
    hwloc_bitmap_t final = hwloc_bitmap_dup(st->launcher);
    hwloc_bitmap_t target = hwloc_bitmap_alloc();
    char cs[512], ls[512];

    if (policy == GR_BIND_NONE) {
        snprintf(pl->bound, sizeof(pl->bound), "nothing (--bind none)%s", sim);
    } else if (policy == GR_BIND_LAUNCHER) {
        snprintf(pl->bound, sizeof(pl->bound), "%s (--bind launcher)%s", by_launcher, sim);
    } else if (g < 0) {
        snprintf(pl->bound, sizeof(pl->bound), "%s (--bind gpu: no GPU to bind to)%s", by_launcher, sim);
    } else if (!where) {
        snprintf(pl->bound, sizeof(pl->bound), "%s (--bind gpu: GPU locality unknown)%s", by_launcher, sim);
    } else if (!final || !target || (hwloc_bitmap_and(target, where->cpuset, st->launcher),
                                     hwloc_bitmap_iszero(target))) {
        list_str(where->cpuset, cs, sizeof(cs));
        list_str(st->launcher, ls, sizeof(ls));
        GR_WARN(GR_SUB_BIND, "GPU %d (%s) is local to cores %s, none of which the launcher's mask %s allows; "
                "keeping the launcher's mask (bind ranks near their GPUs, e.g. mpirun --map-by numa, or use "
                "--bind launcher to silence this)", g, st->gpus[g].pci_bus_id, cs, ls);
        snprintf(pl->bound, sizeof(pl->bound), "%s (--bind gpu: GPU's cores are outside the launcher mask)%s",
                 by_launcher, sim);
    } else {
        /* CPUs: gpureduce binds only where it narrows the launcher's mask;
         * where the GPU's cores hold the whole mask, the mask stands as the
         * launcher (or nobody) left it, and `bound` says so. */
        const char *cpu_by = "gpureduce", *cpu_why = "";
        if (hwloc_bitmap_isequal(target, st->launcher)) {
            cpu_by = st->launcher_bound ? "launcher" : NULL;
            cpu_why = "GPU is local to every core";
        } else if (!st->xml && hwloc_set_cpubind(st->topo, target, HWLOC_CPUBIND_PROCESS) != 0) {
            list_str(target, cs, sizeof(cs));
            GR_WARN(GR_SUB_BIND, "hwloc_set_cpubind to cores %s failed (%s); running on the launcher's mask",
                    cs, strerror(errno));
            cpu_by = st->launcher_bound ? "launcher" : NULL;
            cpu_why = "hwloc_set_cpubind failed";
        } else {
            hwloc_bitmap_copy(final, target);
        }
        /* memory: the GPU's NUMA node(s) */
        const char *mem_why = NULL;
        char err[96];
        hwloc_const_bitmap_t nodes = where->nodeset;
        hwloc_const_bitmap_t all_nodes = hwloc_topology_get_topology_nodeset(st->topo);
        if (!nodes || hwloc_bitmap_iszero(nodes)) {
            mem_why = "GPU has no NUMA node";
        } else if (hwloc_bitmap_weight(all_nodes) > 1 && hwloc_bitmap_isincluded(all_nodes, nodes)) {
            mem_why = "GPU is local to every NUMA node";
        } else if (!st->xml && hwloc_set_membind(st->topo, nodes, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET) != 0) {
            snprintf(err, sizeof(err), "hwloc_set_membind failed (%s)", strerror(errno));
            mem_why = err;
            list_str(nodes, ls, sizeof(ls));
            GR_WARN(GR_SUB_BIND, "binding memory to NUMA node %s failed (%s); memory stays where the OS puts it",
                    ls, strerror(errno));
        }
        int by_us = cpu_by && !strcmp(cpu_by, "gpureduce");
        if (by_us && !mem_why)
            snprintf(pl->bound, sizeof(pl->bound), "cpu+mem by gpureduce (--bind gpu)%s", sim);
        else if (by_us)
            snprintf(pl->bound, sizeof(pl->bound), "cpu by gpureduce (--bind gpu; mem not bound: %.48s)%s", mem_why, sim);
        else if (cpu_by && !mem_why)
            snprintf(pl->bound, sizeof(pl->bound), "cpu by launcher, mem by gpureduce (--bind gpu)%s", sim);
        else if (cpu_by)
            snprintf(pl->bound, sizeof(pl->bound), "cpu by launcher (--bind gpu; mem not bound: %.48s)%s", mem_why, sim);
        else if (!mem_why)
            snprintf(pl->bound, sizeof(pl->bound), "mem by gpureduce (--bind gpu; cpu not bound: %s)%s", cpu_why, sim);
        else
            snprintf(pl->bound, sizeof(pl->bound), "nothing (--bind gpu; cpu: %.26s; mem: %.36s)%s", cpu_why, mem_why, sim);
    }
    list_str(final ? final : st->launcher, pl->cpuset, sizeof(pl->cpuset));

    /* numa: the GPU's NUMA node; without a GPU, the node holding the cores */
    hwloc_bitmap_t nodeset = hwloc_bitmap_alloc();
    if (where && where->nodeset && !hwloc_bitmap_iszero(where->nodeset)) {
        pl->numa = hwloc_bitmap_first(where->nodeset);
    } else if (!where && g < 0 && nodeset && final) {
        hwloc_cpuset_to_nodeset(st->topo, final, nodeset);
        pl->numa = hwloc_bitmap_weight(nodeset) == 1 ? hwloc_bitmap_first(nodeset) : -1;
    }
    GR_INFO(GR_SUB_BIND, "bound: %s; cores %s, NUMA %d", pl->bound, pl->cpuset, pl->numa);
    hwloc_bitmap_free(nodeset);
    hwloc_bitmap_free(target);
    hwloc_bitmap_free(final);
}

static void describe_choice(gr_placement_t *pl, pick_how_t how, const char *lr_source, int nsharers,
                            int share_flag)
{
    char why[128];
    switch (how) {
    case PICK_ONLY:
        snprintf(why, sizeof(why), "the only GPU this rank sees");
        break;
    case PICK_ORDER:
        snprintf(why, sizeof(why), "local rank %d of %d (%s), PCI bus order", pl->local_rank, pl->local_size,
                 lr_source);
        break;
    case PICK_NEAR:
        snprintf(why, sizeof(why), "nearest free GPU to the launcher's cores (local rank %d)", pl->local_rank);
        break;
    case PICK_FAR:
        snprintf(why, sizeof(why), "no free GPU near the launcher's cores; next in PCI order (local rank %d)",
                 pl->local_rank);
        break;
    case PICK_SHARED:
        snprintf(why, sizeof(why), "all GPUs taken; least-used (local rank %d)", pl->local_rank);
        break;
    default:
        snprintf(why, sizeof(why), "none");
    }
    if (nsharers > 1)
        snprintf(pl->gpu_choice, sizeof(pl->gpu_choice), "%.80s; shared by %d ranks (%s)", why, nsharers,
                 share_flag ? "--share-gpus" : "cpu backend");
    else
        snprintf(pl->gpu_choice, sizeof(pl->gpu_choice), "%s", why);
}

gr_result_t gr_bind_rank_to_gpu(gr_ctx_t ctx, int want_gpu)
{
    gr_placement_t *pl = &ctx->placement;
    memset(pl, 0, sizeof(*pl));
    pl->rank = ctx->rank;
    pl->pid = (int)getpid();
    snprintf(pl->host, sizeof(pl->host), "%s", ctx->host);
    pl->gpu = -1;
    pl->numa = -1;
    snprintf(pl->bound, sizeof(pl->bound), "nothing");
    snprintf(pl->gpu_choice, sizeof(pl->gpu_choice), "none");

    MPI_Comm node = MPI_COMM_NULL;
    int node_rank = 0, node_size = 1;
    GR_MPI_CHECK(MPI_Comm_split_type(ctx->comm, MPI_COMM_TYPE_SHARED, ctx->rank, MPI_INFO_NULL, &node));
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);

    bind_state_t st;
    memset(&st, 0, sizeof(st));
    st.xml = env_nonempty("GR_TOPOLOGY_XML");
    st.launcher = hwloc_bitmap_alloc();
    node_rec_t *recs = NULL;
    int *lr = NULL;
    plan_t plan;
    memset(&plan, 0, sizeof(plan));
    int placed = 0, failed_peers = 0;

    /* 1. node-local rank (collective) */
    const char *lr_source = "MPI_Comm_split_type";
    int local_rank = node_rank;
    gr_result_t r = resolve_local_rank(node, node_rank, node_size, &local_rank, &lr_source);
    ctx->local_rank = pl->local_rank = local_rank;
    ctx->local_size = pl->local_size = node_size;
    GR_INFO(GR_SUB_BIND, "local rank %d of %d on host %s (from %s)", local_rank, node_size, ctx->host, lr_source);

    /* 2. local facts; a failure here still takes part in step 3 */
    if (r == GR_SUCCESS && !st.launcher)
        r = GR_ERR_NOMEM;
    if (r == GR_SUCCESS)
        r = load_topology(&st);
    if (r == GR_SUCCESS)
        r = list_gpus(&st, want_gpu);
    if (r == GR_SUCCESS)
        r = locate_gpus(&st);
    if (r == GR_SUCCESS)
        r = launcher_mask(&st, local_rank);

    /* The application named the GPU (an ordinal or its current device): the
     * library makes no choice of its own, and sharing is the caller's call. */
    int named = -1;
    if (r == GR_SUCCESS && want_gpu && ctx->cfg.device != GR_DEVICE_AUTO) {
        named = ctx->cfg.device == GR_DEVICE_CURRENT ? gr_cuda_current_device() : ctx->cfg.device;
        if (named < 0 || named >= st.ngpu) {
            gr_log(GR_LOG_ERROR, GR_SUB_ALL, __FILE__, __LINE__,
                   "gr_config_t.device %s%d is not a GPU of this process (it sees %d: ordinals 0..%d, "
                   "CUDA_VISIBLE_DEVICES=%s); name a visible GPU, or use GR_DEVICE_AUTO",
                   ctx->cfg.device == GR_DEVICE_CURRENT ? "GR_DEVICE_CURRENT = " : "", named, st.ngpu,
                   st.ngpu - 1, gr_env(GR_ENV_CUDA_VISIBLE_DEVICES) ? gr_env(GR_ENV_CUDA_VISIBLE_DEVICES) : "unset");
            r = GR_ERR_INVALID_ARG;
            named = -1;
        }
    }

    node_rec_t mine;
    memset(&mine, 0, sizeof(mine));
    mine.failed = r != GR_SUCCESS;
    /* Sharing is an error only where a GPU will really be used, or in a
     * fake-GPU plan that stands for such a run. */
    mine.may_share = ctx->cfg.share_gpus || named >= 0 || !(want_gpu || st.fake);
    mine.launcher_bound = st.launcher_bound;
    if (r == GR_SUCCESS) {
        hwloc_bitmap_t both = hwloc_bitmap_alloc();
        mine.ngpu = st.ngpu;
        for (int g = 0; g < st.ngpu; ++g) {
            mine.key[g] = st.key[g];
            /* nearness: PUs of the launcher's mask in the GPU's locality;
             * without a launcher mask every GPU is equally near */
            if (!st.launcher_bound) {
                mine.score[g] = 1;
            } else if (st.where[g] && both) {
                hwloc_bitmap_and(both, st.where[g]->cpuset, st.launcher);
                mine.score[g] = hwloc_bitmap_weight(both);
            }
        }
        hwloc_bitmap_free(both);
    }
    mine.local_rank = local_rank;

    /* 3. everyone's facts, then the same plan everywhere (collective) */
    recs = (node_rec_t *)malloc(sizeof(node_rec_t) * (size_t)node_size);
    lr = (int *)malloc(sizeof(int) * (size_t)node_size);
    if (!recs || !lr) {
        /* cannot take part in the exchange; the job cannot go on anyway */
        GR_ERROR(GR_SUB_ALL, "cannot allocate %d node records", node_size);
        r = GR_ERR_NOMEM;
        goto done;
    }
    if (MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, recs, (int)sizeof(mine), MPI_BYTE, node) != MPI_SUCCESS) {
        if (r == GR_SUCCESS)
            GR_ERROR(GR_SUB_ALL, "MPI_Allgather of the node's GPU facts failed; check the MPI installation");
        r = r == GR_SUCCESS ? GR_ERR_MPI : r;
        goto done;
    }
    for (int i = 0; i < node_size; ++i)
        lr[i] = recs[i].local_rank;
    for (int i = 0; i < node_size; ++i)
        failed_peers += recs[i].failed;
    if (failed_peers) {
        if (r == GR_SUCCESS)
            GR_INFO(GR_SUB_BIND, "%d rank(s) of this node failed before the GPU plan; no plan", failed_peers);
        goto done;
    }
    r = make_plan(recs, lr, node_size, &plan);
    if (r != GR_SUCCESS)
        goto done;

    if (plan.unplaced > 0) {
        /* one line per node, from its local rank 0; the others stay quiet */
        r = GR_ERR_TOO_MANY_RANKS;
        int sees = 0;
        for (int i = 0; i < node_size; ++i)
            if (lr[i] == plan.first_unplaced)
                sees = recs[i].ngpu;
        if (local_rank == 0) {
            char extra[128] = "";
            if (node_size <= plan.nkeys)
                snprintf(extra, sizeof(extra), " (local rank %d sees %d GPU(s), all taken by other ranks)",
                         plan.first_unplaced, sees);
            GR_ERROR(GR_SUB_ALL, "host %s runs %d ranks but has %d GPU(s)%s%s; start at most %d rank(s) per node "
                   "(mpirun --map-by ppr:%d:node, srun --ntasks-per-node=%d --gpus-per-task=1), or pass "
                   "--share-gpus to put several ranks on one GPU",
                   ctx->host, node_size, plan.nkeys, st.fake ? " (GR_FAKE_GPUS)" : "", extra,
                   plan.nkeys, plan.nkeys, plan.nkeys);
        } else {
            GR_INFO(GR_SUB_BIND, "more ranks than GPUs on host %s; local rank 0 reports it", ctx->host);
        }
    }

    /* 4. this rank's GPU and binding (none when the node's plan failed) */
    int g = r == GR_SUCCESS ? (named >= 0 ? named : plan.pick[node_rank]) : -1;
    if (g >= 0) {
        placed = 1;
        pl->gpu = g;
        snprintf(pl->gpu_name, sizeof(pl->gpu_name), "%s", st.gpus[g].name);
        snprintf(pl->pci_bus_id, sizeof(pl->pci_bus_id), "%s", st.gpus[g].pci_bus_id);
        int k = key_index(&plan, st.key[g]);
        if (named >= 0 && ctx->cfg.device == GR_DEVICE_CURRENT)
            snprintf(pl->gpu_choice, sizeof(pl->gpu_choice), "the caller's current device (GR_DEVICE_CURRENT)");
        else if (named >= 0)
            snprintf(pl->gpu_choice, sizeof(pl->gpu_choice), "named by the caller (gr_config_t.device = %d)", g);
        else
            describe_choice(pl, plan.how[node_rank], lr_source, k >= 0 ? plan.users[k] : 0, ctx->cfg.share_gpus);
        if (want_gpu) {
            ctx->device = g;
            snprintf(ctx->gpu_name, sizeof(ctx->gpu_name), "%s", st.gpus[g].name);
            snprintf(ctx->pci_bus_id, sizeof(ctx->pci_bus_id), "%s", st.gpus[g].pci_bus_id);
            gr_log_set_gpu(g);
        }
        GR_INFO(GR_SUB_BIND, "GPU %d (%s, %s): %s%s", g, pl->pci_bus_id, pl->gpu_name[0] ? pl->gpu_name : "?",
                pl->gpu_choice, want_gpu ? "" : "; planned only, the backend uses no GPU");
    } else if (st.ngpu > 0) {
        snprintf(pl->gpu_choice, sizeof(pl->gpu_choice), "none: more ranks than GPUs (pass --share-gpus)");
    } else {
        snprintf(pl->gpu_choice, sizeof(pl->gpu_choice), "none (no GPU visible)");
    }
    if (r == GR_SUCCESS)
        apply_binding(ctx, &st, placed ? g : -1);

done:
    if (r != GR_SUCCESS && st.launcher && st.topo) {
        /* still say where the rank runs */
        list_str(st.launcher, pl->cpuset, sizeof(pl->cpuset));
    }
    plan_free(&plan);
    free(recs);
    free(lr);
    hwloc_bitmap_free(st.launcher);
    if (st.topo)
        hwloc_topology_destroy(st.topo);
    MPI_Comm_free(&node);
    return r;
}
