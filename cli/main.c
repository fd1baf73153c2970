/* tenfold: command dispatch (placeholder main until the CLI lands). */
#include <stdio.h>
#include "tenfold.h"
int main(void) { printf("tenfold %s\n", TF_VERSION_STRING); return 0; }
