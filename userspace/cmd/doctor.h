/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
#ifndef CORDON_DOCTOR_H
#define CORDON_DOCTOR_H

#include <jansson.h>
#include <stdio.h>
#include "posture.h"

/* The doctor's report as JSON (a new reference) and as text. */
json_t *doctor_json(const struct posture *p);
void doctor_print(FILE *f, const struct posture *p);

#endif
