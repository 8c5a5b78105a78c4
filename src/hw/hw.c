#include "hw.h"

const char *hw_fault_name(enum hw_fault f)
{
    switch (f) {
    case HW_OK:
        return "ok";
    case HW_GP:
        return "#GP";
    case HW_UD:
        return "#UD";
    case HW_ACCESS_FAULT:
        return "access-fault";
    case HW_ILLEGAL:
        return "illegal-instruction";
    case HW_VIRTUAL:
        return "virtual-instruction";
    case HW_PF:
        return "#PF";
    }
    return "?";
}
