#include "SesameBuildInfo.h"

const char *sesame_build_commit(void) {
#ifdef SESAME_COMMIT
    return SESAME_COMMIT;
#else
    return 0;
#endif
}
