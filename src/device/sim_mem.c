/* Device memory of the sim backend (see sim_mem.h). */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "device/exec.h"
#include "device/sim_mem.h"
#include "util/reserve.h"
#include "util/vec.h"

#define SIM_POPULATE_MAX ((uint64_t)2 << 20)

void sim_mem_init(sim_mem *m, uint64_t limit)
{
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->lock, NULL);
    m->limit = limit;
}

void sim_mem_fini(sim_mem *m)
{
    for (size_t i = 0; i < m->n; i++)
        munmap((void *)(uintptr_t)m->r[i].addr, m->r[i].bytes);
    free(m->r);
    pthread_mutex_destroy(&m->lock);
    memset(m, 0, sizeof *m);
}

/* Index of the first region whose addr is > a. */
static size_t upper(const sim_mem *m, uint64_t a)
{
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->r[mid].addr <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

hbg_status sim_mem_alloc(sim_mem *m, uint64_t bytes, uint64_t *addr)
{
    return sim_mem_alloc_at(m, 0, bytes, addr);
}

hbg_status sim_mem_alloc_at(sim_mem *m, uint64_t at, uint64_t bytes, uint64_t *addr)
{
    if (!addr || bytes == 0) {
        hbg__exec_set_error(addr ? "sim: an allocation of 0 bytes" : "sim: no place for the address (NULL)");
        return HBG_E_INVAL;
    }
    /* A size no mapping can have is still a size: the device has not that
     * much memory, as it has not for one just past its limit. */
    if (bytes > SIZE_MAX / 2) {
        hbg__exec_set_error("sim: cannot allocate %llu bytes of device memory (more than the address space holds)",
                           (unsigned long long)bytes);
        return HBG_E_DEVICE_ALLOC;
    }
    pthread_mutex_lock(&m->lock);
    hbg_status st = HBG_OK;
    if (m->limit && (bytes > m->limit || m->reserved > m->limit - bytes)) {
        hbg__exec_set_error("sim: allocating %llu bytes would exceed the device memory limit (%llu of %llu in use)",
                           (unsigned long long)bytes, (unsigned long long)m->reserved,
                           (unsigned long long)m->limit);
        st = HBG_E_DEVICE_ALLOC;
        goto out;
    }
    if (!vec_grow((void **)&m->r, &m->cap, m->n + 1, sizeof *m->r)) {
        hbg__exec_set_error("sim: no memory to track %zu allocations", m->n + 1);
        st = HBG_E_NOMEM;
        goto out;
    }
    /* Device memory is resident once allocated; host pages are not, and
     * each first touch would be a fault (several microseconds apiece in a
     * virtual machine) inside whichever bind segment writes it first. Up
     * to SIM_POPULATE_MAX the pages are committed here (hbg__commit: mapped
     * and written once, as mapping alone leaves the first write costly in
     * a VM); larger regions (GM heaps, big arguments) stay lazy, so a
     * large device costs what it uses. */
    void *p = mmap((void *)(uintptr_t)at, (size_t)bytes, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | (at ? MAP_FIXED_NOREPLACE : 0), -1, 0);
    /* Linux before 4.17 takes MAP_FIXED_NOREPLACE for a hint. */
    if (p != MAP_FAILED && at && p != (void *)(uintptr_t)at) {
        munmap(p, (size_t)bytes);
        p = MAP_FAILED;
    }
    if (p == MAP_FAILED) {
        if (at)
            hbg__exec_set_error("sim: the host refused to map %llu bytes of device memory at 0x%llx",
                                (unsigned long long)bytes, (unsigned long long)at);
        else
            hbg__exec_set_error("sim: the host refused to map %llu bytes of device memory", (unsigned long long)bytes);
        st = HBG_E_DEVICE_ALLOC;
        goto out;
    }
    if (bytes <= SIM_POPULATE_MAX)
        hbg__commit(p, (size_t)bytes);
    uint64_t a = (uint64_t)(uintptr_t)p;
    size_t i = upper(m, a);
    memmove(&m->r[i + 1], &m->r[i], (m->n - i) * sizeof *m->r);
    m->r[i] = (sim_region){a, bytes};
    m->n++;
    m->reserved += bytes;
    *addr = a;
out:
    pthread_mutex_unlock(&m->lock);
    return st;
}

void sim_mem_free(sim_mem *m, uint64_t addr)
{
    pthread_mutex_lock(&m->lock);
    size_t i = upper(m, addr);
    if (i > 0 && m->r[i - 1].addr == addr) {
        sim_region r = m->r[i - 1];
        memmove(&m->r[i - 1], &m->r[i], (m->n - i) * sizeof *m->r);
        m->n--;
        m->reserved -= r.bytes;
        munmap((void *)(uintptr_t)r.addr, (size_t)r.bytes);
    }
    pthread_mutex_unlock(&m->lock);
}

bool sim_mem_contains(sim_mem *m, uint64_t addr, uint64_t n)
{
    pthread_mutex_lock(&m->lock);
    size_t i = upper(m, addr);
    bool ok = false;
    if (i > 0) {
        const sim_region *r = &m->r[i - 1];
        uint64_t rel = addr - r->addr;
        ok = rel < r->bytes && n <= r->bytes - rel;
    }
    pthread_mutex_unlock(&m->lock);
    return ok;
}
