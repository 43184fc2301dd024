/*
** memstone_rank: the FTS5 auxiliary function that ranks SQLite's full-text candidates (backends/sqlite/fts.py;
** issue 15). Built at install by hatch_build.py (build.py beside this file), loaded into each connection when
** present; without it the search ranks with bm25() and returns the same rows and scores.
**
**     SELECT rowid, memstone_rank(fts, wide, n0, n1, ...) AS s FROM fts WHERE fts MATCH ?
**         ORDER BY s, rowid LIMIT wide
**
** It gives the score of SQLite's own bm25() (k1 = 1.2, b = 0.75, every column weight 1), with three differences:
**
**   - each phrase's IDF comes from its row count ``n<i>``, an argument (one per phrase of the MATCH, in the
**     order the phrases appear), instead of a pass over the phrase's doclist at the start of every statement;
**   - a phrase whose argument is NULL weighs nothing: a MATCH may repeat a phrase (``(a OR b) AND (a)``) and the
**     row is scored once, over the phrases that carry a count;
**   - with ``wide`` (the statement's LIMIT; NULL: every row exact), a row that cannot reach the top ``wide`` is
**     not looked up in ``%_docsize`` (FTS5 reads a row's length only when xColumnSize asks: 40 % of a 100k search
**     went there). The statement keeps a min-heap of the ``wide`` best exact scores seen so far. A row's upper
**     bound is the same sum with the shortest length the row can have (its last hit's offset + the phrase's
**     tokens): IEEE +, * and / by positive numbers are monotonic, so with the terms added in the same order the
**     bound is >= the exact score, bit for bit. When the heap is full and the bound is strictly below its worst,
**     ``wide`` rows already score strictly better: the row returns its (negated) bound, which sorts after them,
**     and the LIMIT never returns it. Otherwise the row is scored exactly and pushed. So the statement's top
**     ``wide`` (row ids, scores, ties by row id) are bm25()'s; the rows past it are not.
**
** The arithmetic is bm25()'s (SQLite 3.54, ext/fts5/fts5_aux.c): IDF = log((N - n + 0.5) / (n + 0.5)) floored at
** 1e-6, avgdl = the index's tokens / rows, and score = -(sum over phrases, in phrase order, of
** IDF * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl))), D the row's tokens, f the phrase's hits in the row.
** A phrase with no hit in the row adds exactly +0.0, so it is skipped; the other terms are added in the same order
** as bm25() adds them, so a list equal to bm25()'s is equal bit for bit. Built with -ffp-contract=off (no fused
** multiply-add, as SQLite's own build on x86-64).
*/
#include <sqlite3ext.h>
SQLITE_EXTENSION_INIT1
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define RANK_K1 1.2
#define RANK_B 0.75

/* Computed at a statement's first row and kept as the statement's auxiliary data. */
typedef struct RankQuery {
  int nPhrase;
  double avgdl;  /* tokens per row over the whole index */
  double *idf;   /* per phrase; 0.0 for a phrase given NULL (not scored) */
  int wide;      /* the heap's capacity; 0: no pruning */
  int nHeap;     /* exact scores in the heap */
  double *heap;  /* min-heap of the best exact scores (positive: higher is better), heap[0] the worst */
  int seen;      /* whether lastRowid / lastValue hold the last row's result */
  sqlite3_int64 lastRowid;
  double lastValue;
} RankQuery;

#ifdef MEMSTONE_RANK_PROBE
/* Bench only (bench/fts_topk_probe.py compiles with -DMEMSTONE_RANK_PROBE): rows scored exactly / pruned. */
static sqlite3_int64 probe_exact = 0, probe_pruned = 0;
static void probe_counts(sqlite3_context *ctx, int n, sqlite3_value **v) {
  (void)n;
  (void)v;
  char *s = sqlite3_mprintf("%lld %lld", probe_exact, probe_pruned);
  probe_exact = probe_pruned = 0;
  sqlite3_result_text(ctx, s, -1, sqlite3_free);
}
#define PROBE(x) (x)++
#else
#define PROBE(x)
#endif

/* Push an exact score into the full or filling heap of the ``wide`` best. */
static void heap_push(RankQuery *q, double v) {
  double *h = q->heap;
  int i, c;
  if (q->nHeap < q->wide) {
    for (i = q->nHeap++; i > 0 && h[(i - 1) / 2] > v; i = (i - 1) / 2) h[i] = h[(i - 1) / 2];
    h[i] = v;
    return;
  }
  if (!(v > h[0])) return; /* no better than the worst kept: the heap's worst stays */
  for (i = 0; (c = 2 * i + 1) < q->nHeap; i = c) {
    if (c + 1 < q->nHeap && h[c + 1] < h[c]) c++;
    if (!(h[c] < v)) break;
    h[i] = h[c];
  }
  h[i] = v;
}

static int rank_query(const Fts5ExtensionApi *api, Fts5Context *fts, int nVal, sqlite3_value **apVal,
                      RankQuery **out, sqlite3_context *ctx) {
  RankQuery *q = (RankQuery *)api->xGetAuxdata(fts, 0);
  sqlite3_int64 rows = 0, tokens = 0;
  int i, rc;
  if (q) {
    *out = q;
    return SQLITE_OK;
  }
  int n = api->xPhraseCount(fts);
  sqlite3_int64 wide = 0;
  if (nVal != n + 1) {
    char *msg = sqlite3_mprintf("memstone_rank: the MATCH has %d phrases but %d row counts were given (the "
                                "statement's LIMIT or NULL, then one count per phrase, NULL for a repeated phrase)",
                                n, nVal - 1);
    sqlite3_result_error(ctx, msg, -1);
    sqlite3_free(msg);
    return -1; /* the message is set */
  }
  if (sqlite3_value_type(apVal[0]) != SQLITE_NULL) wide = sqlite3_value_int64(apVal[0]);
  if (wide < 0 || wide > 1000000) wide = 0; /* no heap: every row exact */
  q = (RankQuery *)sqlite3_malloc64(sizeof(RankQuery) + (sqlite3_uint64)(n + wide) * sizeof(double));
  if (!q) return SQLITE_NOMEM;
  memset(q, 0, sizeof(RankQuery));
  q->nPhrase = n;
  q->idf = (double *)&q[1];
  q->wide = (int)wide;
  q->heap = q->idf + n;
  apVal++; /* the row counts */
  rc = api->xRowCount(fts, &rows);
  if (rc == SQLITE_OK) rc = api->xColumnTotalSize(fts, -1, &tokens);
  if (rc != SQLITE_OK) {
    sqlite3_free(q);
    return rc;
  }
  q->avgdl = (double)tokens / (double)rows;
  for (i = 0; i < n; i++) {
    if (sqlite3_value_type(apVal[i]) == SQLITE_NULL) {
      q->idf[i] = 0.0;
    } else {
      sqlite3_int64 hits = sqlite3_value_int64(apVal[i]);
      double x = log((rows - hits + 0.5) / (hits + 0.5));
      q->idf[i] = x > 0.0 ? x : 1e-6;
    }
  }
  rc = api->xSetAuxdata(fts, q, sqlite3_free);
  if (rc != SQLITE_OK) return rc; /* FTS5 freed it */
  *out = q;
  return SQLITE_OK;
}

static void rank_row(const Fts5ExtensionApi *api, Fts5Context *fts, sqlite3_context *ctx, int nVal,
                     sqlite3_value **apVal) {
  RankQuery *q = 0;
  int rc = rank_query(api, fts, nVal, apVal, &q, ctx);
  int size = 0, least = 1, i, local[16], *hits = local;
  double score = 0.0, norm;
  sqlite3_int64 rowid;
  if (rc == -1) return;
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  /* A row evaluated twice (the same rowid in a row) returns what it did: pushed twice, its score would fill two of
  ** the heap's places and could prune a row of the true top ``wide``. */
  rowid = api->xRowid(fts);
  if (q->seen && rowid == q->lastRowid) {
    sqlite3_result_double(ctx, q->lastValue);
    return;
  }
  if (q->nPhrase > 16 && !(hits = (int *)sqlite3_malloc64((sqlite3_uint64)q->nPhrase * sizeof(int)))) {
    sqlite3_result_error_nomem(ctx);
    return;
  }
  /* Each phrase's hits in the row, and the shortest length the row can have: a hit at token offset ``off`` of a
  ** phrase of ``k`` tokens means the row holds at least off + k tokens. */
  for (i = 0; i < q->nPhrase; i++) {
    Fts5PhraseIter it;
    int col = 0, off = 0, k = 0, last = -1;
    hits[i] = 0;
    if (q->idf[i] == 0.0) continue;
    rc = api->xPhraseFirst(fts, i, &it, &col, &off);
    if (rc != SQLITE_OK) break;
    for (; col >= 0; api->xPhraseNext(fts, &it, &col, &off)) {
      hits[i]++;
      if (off > last) last = off;
    }
    if (hits[i] == 0) continue;
    k = api->xPhraseSize(fts, i);
    if (last + (k > 0 ? k : 1) > least) least = last + (k > 0 ? k : 1);
    if (hits[i] > least) least = hits[i];
  }
  if (rc == SQLITE_OK && q->wide > 0 && q->nHeap == q->wide) {
    /* The bound: the exact formula with ``least`` for the row's length (norm no larger, so each term no smaller). */
    norm = RANK_K1 * (1 - RANK_B + RANK_B * (double)least / q->avgdl);
    for (i = 0; i < q->nPhrase; i++) {
      double f = (double)hits[i];
      if (hits[i] == 0) continue; /* adds +0.0 */
      score += q->idf[i] * ((f * (RANK_K1 + 1.0)) / (f + norm));
    }
    if (score < q->heap[0]) { /* strictly: a tie with the worst kept is scored exactly */
      PROBE(probe_pruned);
      if (hits != local) sqlite3_free(hits);
      q->seen = 1;
      q->lastRowid = rowid;
      q->lastValue = -1.0 * score;
      sqlite3_result_double(ctx, q->lastValue);
      return;
    }
    score = 0.0;
  }
  if (rc == SQLITE_OK) rc = api->xColumnSize(fts, -1, &size);
  if (rc != SQLITE_OK) {
    if (hits != local) sqlite3_free(hits);
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  PROBE(probe_exact);
  norm = RANK_K1 * (1 - RANK_B + RANK_B * (double)size / q->avgdl);
  for (i = 0; i < q->nPhrase; i++) {
    double f = (double)hits[i];
    if (hits[i] == 0) continue; /* adds +0.0 */
    score += q->idf[i] * ((f * (RANK_K1 + 1.0)) / (f + norm));
  }
  if (hits != local) sqlite3_free(hits);
  if (q->wide > 0) heap_push(q, score);
  q->seen = 1;
  q->lastRowid = rowid;
  q->lastValue = -1.0 * score;
  sqlite3_result_double(ctx, q->lastValue);
}

#ifdef _WIN32
__declspec(dllexport)
#endif
int sqlite3_memstonerank_init(sqlite3 *db, char **err, const sqlite3_api_routines *routines) {
  fts5_api *fts5 = 0;
  sqlite3_stmt *st = 0;
  int rc;
  SQLITE_EXTENSION_INIT2(routines);
  rc = sqlite3_prepare_v2(db, "SELECT fts5(?1)", -1, &st, 0);
  if (rc == SQLITE_OK) {
    sqlite3_bind_pointer(st, 1, (void *)&fts5, "fts5_api_ptr", 0);
    sqlite3_step(st);
    rc = sqlite3_finalize(st);
  }
  if (rc != SQLITE_OK || fts5 == 0 || fts5->iVersion < 2) {
    *err = sqlite3_mprintf("memstone_rank: this SQLite has no FTS5 (version 2 or later of its API)");
    return SQLITE_ERROR;
  }
#ifdef MEMSTONE_RANK_PROBE
  sqlite3_create_function(db, "memstone_rank_counts", 0, SQLITE_UTF8, 0, probe_counts, 0, 0);
#endif
  return fts5->xCreateFunction(fts5, "memstone_rank", 0, rank_row, 0);
}
