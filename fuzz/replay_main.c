/* Replays corpus files and folders through a harness without libFuzzer, so that every
 * harness also runs as a plain program in ordinary CI and never rots. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        fprintf(stderr, "replay: cannot open %s\n", path);
        return 1;
    }
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    uint8_t *data = malloc(length > 0 ? (size_t)length : 1);
    size_t got = fread(data, 1, (size_t)(length > 0 ? length : 0), file);
    fclose(file);
    LLVMFuzzerTestOneInput(data, got);
    free(data);
    return 0;
}

int main(int argc, char **argv) {
    size_t replayed = 0;
    int failures = 0;
    for (int arg = 1; arg < argc; arg++) {
        struct stat info;
        if (stat(argv[arg], &info) != 0) {
            fprintf(stderr, "replay: no such file or folder: %s\n", argv[arg]);
            return 2;
        }
        if (!S_ISDIR(info.st_mode)) {
            failures += replay_file(argv[arg]);
            replayed++;
            continue;
        }
        DIR *folder = opendir(argv[arg]);
        struct dirent *entry;
        while (folder && (entry = readdir(folder)) != NULL) {
            if (entry->d_name[0] == '.') continue;
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[arg], entry->d_name);
            failures += replay_file(path);
            replayed++;
        }
        if (folder) closedir(folder);
    }
    printf("replay: %zu inputs replayed, %d unreadable\n", replayed, failures);
    return failures ? 1 : 0;
}
