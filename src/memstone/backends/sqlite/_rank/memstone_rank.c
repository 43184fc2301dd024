/*
** memstone_rank: the FTS5 auxiliary function that ranks SQLite's full-text candidates (backends/sqlite/fts.py;
** issue 15). Built at install by hatch_build.py (build.py beside this file), loaded into each connection when
** present; without it the search ranks with bm25() and returns the same rows and scores.
**
**     SELECT rowid, memstone_rank(fts, n0, n1, ...) AS s FROM fts WHERE fts MATCH ? ORDER BY s, rowid LIMIT ?
**
** It gives the score of SQLite's own bm25() (k1 = 1.2, b = 0.75, every column weight 1), with two differences:
**
**   - each phrase's IDF comes from its row count ``n<i>``, an argument (one per phrase of the MATCH, in the
**     order the phrases appear), instead of a pass over the phrase's doclist at the start of every statement;
**   - a phrase whose argument is NULL weighs nothing: a MATCH may repeat a phrase (``(a OR b) AND (a)``) and the
**     row is scored once, over the phrases that carry a count.
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
} RankQuery;

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
  if (nVal != n) {
    char *msg = sqlite3_mprintf("memstone_rank: the MATCH has %d phrases but %d row counts were given (one per "
                                "phrase, NULL for a repeated phrase)", n, nVal);
    sqlite3_result_error(ctx, msg, -1);
    sqlite3_free(msg);
    return -1; /* the message is set */
  }
  q = (RankQuery *)sqlite3_malloc64(sizeof(RankQuery) + (sqlite3_uint64)n * sizeof(double));
  if (!q) return SQLITE_NOMEM;
  q->nPhrase = n;
  q->idf = (double *)&q[1];
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
  int size = 0, i;
  double score = 0.0, norm;
  if (rc == -1) return;
  if (rc == SQLITE_OK) rc = api->xColumnSize(fts, -1, &size);
  if (rc != SQLITE_OK) {
    sqlite3_result_error_code(ctx, rc);
    return;
  }
  norm = RANK_K1 * (1 - RANK_B + RANK_B * (double)size / q->avgdl);
  for (i = 0; i < q->nPhrase; i++) {
    Fts5PhraseIter it;
    int col = 0, off = 0, hits = 0;
    double f;
    if (q->idf[i] == 0.0) continue;
    rc = api->xPhraseFirst(fts, i, &it, &col, &off);
    if (rc != SQLITE_OK) {
      sqlite3_result_error_code(ctx, rc);
      return;
    }
    for (; col >= 0; api->xPhraseNext(fts, &it, &col, &off)) hits++;
    if (hits == 0) continue; /* adds +0.0 */
    f = (double)hits;
    score += q->idf[i] * ((f * (RANK_K1 + 1.0)) / (f + norm));
  }
  sqlite3_result_double(ctx, -1.0 * score);
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
  return fts5->xCreateFunction(fts5, "memstone_rank", 0, rank_row, 0);
}
