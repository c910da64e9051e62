/* outcome.c — how a launched command ended (outcome.h). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "launch.h"
#include "outcome.h"
#include "watchdog.h"

void outcome__set(struct run_outcome *o, const struct launch_result *r, double timeout_s,
		  const struct watchdog_config *wdc)
{
	o->hung = r->hung;
	o->watchdog_s = wdc->period_s;
	o->continued = r->hung && wdc->on_hang == WATCHDOG_CONTINUE;
	o->snapshot_asked = r->snapshot_asked;
	o->snapshot = r->snapshot;
	o->known = 1;
	o->exit_status = WIFEXITED(r->status) ? WEXITSTATUS(r->status) : -1;
	o->signal = WIFSIGNALED(r->status) ? WTERMSIG(r->status) : 0;
	o->timed_out = r->timed_out;
	o->timeout_s = timeout_s;
}

int outcome__failed(const struct run_outcome *o)
{
	return o->known && (o->exit_status != 0 || o->signal || o->timed_out || o->hung);
}

void outcome__sentence(const struct run_outcome *o, char *buf, size_t size)
{
	char how[96];
	if (o->signal)
		snprintf(how, sizeof(how), "was killed by signal %d (%s)", o->signal, strsignal(o->signal));
	else
		snprintf(how, sizeof(how), "exited with status %d", o->exit_status);
	char then[192];
	if (o->timed_out)
		snprintf(then, sizeof(then), "ran past --timeout (%.0f s), was stopped and %s", o->timeout_s, how);
	else
		snprintf(then, sizeof(then), "%s", how);
	if (!o->known)
		*buf = '\0';
	else if (o->continued)
		snprintf(buf, size, "The command hung: every thread of one of its processes slept in a "
			 "synchronisation wait with no deadline, using no CPU, for %g s (CONVOY_WATCHDOG). %s "
			 "(--on-hang continue); it then %s.", o->watchdog_s,
			 o->snapshot ? "convoy had the shim write a snapshot profile of it then and let it go on" :
			 o->snapshot_asked ? "convoy sent it CONVOY_SNAPSHOT_SIGNAL for a snapshot, but none was "
					     "written (the program handles that signal itself, and its handler ran "
					     "instead; or the shim could not write) and let it go on" :
				       "It does not take CONVOY_SNAPSHOT_SIGNAL (no shim in it, or the signal ignored or "
				       "blocked in every thread), so convoy took no snapshot and let it go on", then);
	else if (o->timed_out)
		snprintf(buf, size, "The command ran past --timeout (%.0f s), was stopped and %s; "
			 "the profile covers it up to then.", o->timeout_s, how);
	else if (o->hung)
		snprintf(buf, size, "The command hung: every thread of one of its processes slept in a "
			 "synchronisation wait with no deadline, using no CPU, for %g s (CONVOY_WATCHDOG). "
			 "convoy stopped it and it %s; the profile covers it up to then.", o->watchdog_s, how);
	else
		snprintf(buf, size, "The command %s.", how);
}

void outcome__json(const struct run_outcome *o, json_object *obj)
{
	if (!o->known)
		return;
	json_object_object_add(obj, "exit_status", o->exit_status >= 0 ? json_object_new_int(o->exit_status) : NULL);
	json_object_object_add(obj, "signal", json_object_new_int(o->signal));
	json_object_object_add(obj, "timed_out", json_object_new_boolean(o->timed_out));
	json_object_object_add(obj, "hung", json_object_new_boolean(o->hung));
	if (o->hung) {
		json_object_object_add(obj, "on_hang", json_object_new_string(o->continued ? "continue" : "stop"));
		json_object_object_add(obj, "hang_snapshot_asked", json_object_new_boolean(o->snapshot_asked));
		json_object_object_add(obj, "hang_snapshot", json_object_new_boolean(o->snapshot));
	}
}

void outcome__from_json(struct run_outcome *o, json_object *obj)
{
	json_object *v;
	memset(o, 0, sizeof(*o));
	if (!json_object_object_get_ex(obj, "timed_out", &v) || !json_object_is_type(v, json_type_boolean))
		return;
	o->known = 1;
	o->timed_out = json_object_get_boolean(v);
	o->hung = json_object_object_get_ex(obj, "hung", &v) && json_object_get_boolean(v);
	o->continued = json_object_object_get_ex(obj, "on_hang", &v) && !strcmp(json_object_get_string(v), "continue");
	o->snapshot = json_object_object_get_ex(obj, "hang_snapshot", &v) && json_object_get_boolean(v);
	/* A recording from before hang_snapshot_asked: a snapshot was asked for when one was written. */
	o->snapshot_asked = json_object_object_get_ex(obj, "hang_snapshot_asked", &v) ? json_object_get_boolean(v) :
											o->snapshot;
	o->exit_status = json_object_object_get_ex(obj, "exit_status", &v) && json_object_is_type(v, json_type_int) ?
				 json_object_get_int(v) : -1;
	o->signal = json_object_object_get_ex(obj, "signal", &v) && json_object_is_type(v, json_type_int) ?
			    json_object_get_int(v) : 0;
}
