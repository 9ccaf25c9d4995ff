/* Unit test of dec_engine_choose (decode/engine/choose.c): which decoders a
 * session's serial and worker engines use for each --decoder choice, with the
 * OpenCSD version cstrace's decoders copy and with another, and what it says. */
#include <stdio.h>
#include <string.h>

#include "engine/engine.h"
#include "test.h"

/* What the log was told: how many lines, the last one and its level. */
struct said {
	int lines;
	enum cst_log_level level;
	char msg[512];
};

static void on_log(void *ctx, enum cst_log_level level, const char *msg)
{
	struct said *s = ctx;

	s->lines++;
	s->level = level;
	snprintf(s->msg, sizeof(s->msg), "%s", msg);
}

/* dec_engine_choose(@choice, @version) into @e, its log in @s; returns its value.
 * The engines start with every flag set: all they hold must be set. */
static int choose(enum cst_decoder_choice choice, uint32_t version, struct dec_engines *e,
		  struct said *s)
{
	const struct cst_log log = {on_log, s};

	memset(s, 0, sizeof(*s));
	memset(e, 1, sizeof(*e));
	return dec_engine_choose(choice, version, &log, e);
}

static bool engine_is(const struct dec_engine *e, bool own, bool strict)
{
	return e->own == own && e->strict == strict && !e->timed && !e->runs;
}

int main(void)
{
	const uint32_t other = 0x010400; /* OpenCSD 1.4.0 */
	struct dec_engines e;
	struct said s;

	/* The pinned OpenCSD: auto puts cstrace's decoders everywhere, declines
	 * going back to OpenCSD's on the caller's thread; cstrace puts them
	 * everywhere, declines an error; recover everywhere, declines gaps;
	 * opencsd uses none. Nothing said. */
	CHECK_EQ_INT(choose(cst_decoder_auto, DEC_OCSD_PINNED, &e, &s), 0);
	CHECK(engine_is(&e.serial, true, false));
	CHECK(engine_is(&e.workers, true, false));
	CHECK(!e.serial.recover && !e.workers.recover);
	CHECK_EQ_INT(choose(cst_decoder_recover, DEC_OCSD_PINNED, &e, &s), 0);
	CHECK(engine_is(&e.serial, true, false) && e.serial.recover);
	CHECK(engine_is(&e.workers, true, false) && e.workers.recover);
	CHECK_EQ_INT(s.lines, 0);
	CHECK_EQ_INT(s.lines, 0);
	CHECK_EQ_INT(choose(cst_decoder_cstrace, DEC_OCSD_PINNED, &e, &s), 0);
	CHECK(engine_is(&e.serial, true, true));
	CHECK(engine_is(&e.workers, true, true));
	CHECK_EQ_INT(s.lines, 0);
	CHECK_EQ_INT(choose(cst_decoder_opencsd, DEC_OCSD_PINNED, &e, &s), 0);
	CHECK(engine_is(&e.serial, false, false));
	CHECK(engine_is(&e.workers, false, false));
	CHECK_EQ_INT(s.lines, 0);

	/* Another OpenCSD, whose elements cstrace's decoders may no longer give:
	 * auto uses OpenCSD's everywhere and warns once, naming both versions */
	CHECK_EQ_INT(choose(cst_decoder_auto, other, &e, &s), 0);
	CHECK(engine_is(&e.serial, false, false));
	CHECK(engine_is(&e.workers, false, false));
	CHECK_EQ_INT(s.lines, 1);
	CHECK_EQ_INT(s.level, cst_log_warning);
	CHECK(strstr(s.msg, "1.4.0") && strstr(s.msg, "1.3.3"));
	/* cstrace is refused with an error naming both */
	CHECK_EQ_INT(choose(cst_decoder_cstrace, other, &e, &s), -cste_unsupported);
	CHECK_EQ_INT(s.lines, 1);
	CHECK_EQ_INT(s.level, cst_log_error);
	CHECK(strstr(s.msg, "1.4.0") && strstr(s.msg, "1.3.3"));
	CHECK(strstr(s.msg, "--decoder=opencsd") != NULL);
	/* opencsd does not care */
	CHECK_EQ_INT(choose(cst_decoder_opencsd, other, &e, &s), 0);
	CHECK(engine_is(&e.serial, false, false));
	CHECK(engine_is(&e.workers, false, false));
	CHECK_EQ_INT(s.lines, 0);
	/* a version that differs in the patch level only is another version too */
	CHECK_EQ_INT(choose(cst_decoder_cstrace, DEC_OCSD_PINNED + 1, &e, &s), -cste_unsupported);
	CHECK(strstr(s.msg, "1.3.4") != NULL);

	/* a choice that is none of them */
	CHECK_EQ_INT(choose((enum cst_decoder_choice)99, DEC_OCSD_PINNED, &e, &s), -cste_invalid);
	return test_done();
}
