// Includes the generated headers after the C library, as a user's C or C++ program would.
#include <math.h>
#include <stdlib.h>

#include "abs.h"
#include "class.h"
